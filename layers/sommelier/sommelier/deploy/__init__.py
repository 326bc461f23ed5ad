"""CloudFormation custom resources: the responder that always answers, and the deploy-time duties."""

"""template.yaml: cfn-lint is clean, and the security/cost properties the design relies on hold.

The template is parsed with cfn-lint's own loader, so `!Ref`/`!GetAtt`/`!Sub` come back as
`{"Ref": ...}`, `{"Fn::GetAtt": [...]}`, `{"Fn::Sub": ...}`.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import cfnlint.decode as cfnlint_decode
import pytest

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "template.yaml"
SECRET_ARN = {"Fn::GetAtt": ["DatabaseCluster", "MasterUserSecret.SecretArn"]}
APP_SECRET_ARN = {"Ref": "AppDatabaseSecret"}  # the tool function's data-only database user
SECRET_NAME = re.compile(r"(password|token|api_?key)$", re.I)
SECRET_PARAMETERS = {"TelegramBotToken", "OpenAIApiKey", "EmbeddingApiKey"}
BOT_SECRETS = {"Ref": "BotSecrets"}  # the bot token alone
MODEL_KEYS = {"Ref": "ModelKeysSecret"}  # the LLM and embedding keys
WEBHOOK_SECRET = {"Ref": "WebhookSecretToken"}
TABLE_ARN = {"Fn::GetAtt": ["IdempotencyTable", "Arn"]}
TELEGRAM_FUNCTIONS = ("WebhookFunction", "AgentFunction", "SetWebhookFunction")
PSEUDO_PARAMETERS = {
    "AWS::AccountId",
    "AWS::NotificationARNs",
    "AWS::NoValue",
    "AWS::Partition",
    "AWS::Region",
    "AWS::StackId",
    "AWS::StackName",
    "AWS::URLSuffix",
}


@pytest.fixture(scope="module")
def template() -> dict:
    parsed, matches = cfnlint_decode.decode_str(TEMPLATE.read_text(encoding="utf-8"))
    assert not matches, [str(m) for m in matches]
    return parsed


@pytest.fixture(scope="module")
def resources(template) -> dict:
    return template["Resources"]


def _of_type(resources: dict, type_: str) -> dict:
    return {name: res for name, res in resources.items() if res["Type"] == type_}


def _functions(resources: dict) -> dict:
    return _of_type(resources, "AWS::Serverless::Function")


def _as_list(value) -> list:
    return value if isinstance(value, list) else [value]


def _cfn_lint_command() -> list[str]:
    script = Path(sys.executable).with_name("cfn-lint")
    if script.exists():
        return [str(script)]
    found = shutil.which("cfn-lint")
    if found:
        return [found]
    return [sys.executable, "-c", "import sys; from cfnlint.runner import main; sys.exit(main())"]


# ------------------------------------------------------------------------------ lint ------


@pytest.mark.gate
def test_cfn_lint_is_clean():
    result = subprocess.run(
        [*_cfn_lint_command(), "--", str(TEMPLATE)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_reference_points_at_something_that_exists(template):
    """cfn-lint validates SAM resources by schema only; catch a dangling !Ref/!GetAtt/${} here."""
    known = set(template["Resources"]) | set(template.get("Parameters", {})) | PSEUDO_PARAMETERS
    # SAM's references to what AutoPublishAlias creates: `!Ref Function.Alias` and `.Version`.
    known |= {
        f"{name}.{part}"
        for name, resource in template["Resources"].items()
        if "AutoPublishAlias" in resource.get("Properties", {})
        for part in ("Alias", "Version")
    }
    dangling: list[str] = []

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "Ref" and isinstance(value, str) and value not in known:
                    dangling.append(f"Ref {value}")
                elif key == "Fn::GetAtt":
                    target = value[0] if isinstance(value, list) else str(value).split(".")[0]
                    if target not in known:
                        dangling.append(f"GetAtt {target}")
                elif key == "Fn::Sub":
                    text = value[0] if isinstance(value, list) else value
                    local = set(value[1]) if isinstance(value, list) and len(value) > 1 else set()
                    for name in re.findall(r"\$\{([^!}][^}]*)\}", text):
                        base = name.split(".")[0]
                        if base not in known and base not in local:
                            dangling.append(f"Sub ${{{name}}}")
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk({k: v for k, v in template.items() if k in ("Globals", "Resources", "Outputs")})
    for resource in template["Resources"].values():
        for dependency in _as_list(resource.get("DependsOn", [])):
            if dependency not in template["Resources"]:
                dangling.append(f"DependsOn {dependency}")
    assert not dangling


# ------------------------------------------------------------------------------ shape -----


def test_is_a_sam_template_with_the_python_globals(template):
    assert template["Transform"] == "AWS::Serverless-2016-10-31"
    function_globals = template["Globals"]["Function"]
    assert function_globals["Runtime"] == "python3.12"
    assert function_globals["Tracing"] == "Active"
    # One architecture, not a choice: the layer's Makefile can't follow a parameter, so an x86_64 answer
    # at the guided deploy would have deployed x86_64 functions on an arm64 layer.
    assert function_globals["Architectures"] == ["arm64"]
    assert "Architecture" not in template["Parameters"]
    for name, function in _functions(template["Resources"]).items():
        assert "Architectures" not in function["Properties"], name
    variables = function_globals["Environment"]["Variables"]
    assert variables["POWERTOOLS_SERVICE_NAME"] == "sommelier"
    assert {"POWERTOOLS_LOG_LEVEL", "LOG_LEVEL"} <= set(variables)


def test_parameters_have_descriptions_and_sane_defaults(template):
    parameters = template["Parameters"]
    for name in ("Stage", "DatabaseName", "AuroraMaxCapacity", "EmbeddingModel"):
        assert name in parameters
    for name, parameter in parameters.items():
        assert parameter.get("Description"), f"parameter {name} has no description"
    assert parameters["Stage"]["Default"] == "prod"
    assert parameters["DatabaseName"]["Default"] == "sommelier"
    assert str(parameters["AuroraMaxCapacity"]["Default"]) == "2"
    assert parameters["EmbeddingModel"]["Default"] == "text-embedding-3-small"
    # Secrets are never template parameters in plain text (docs/architecture.md): a parameter
    # named like a secret is NoEcho, has no non-empty default, and feeds only the BotSecrets
    # secret (test_secret_parameters_feed_only_the_bot_secret).
    secret_like = {n for n in parameters if SECRET_NAME.search(n)}
    assert secret_like == SECRET_PARAMETERS
    for name in secret_like:
        assert parameters[name].get("NoEcho") in (True, "true"), name
        assert parameters[name].get("Default", "") == "", name
    # Only the bot token has no default: an offline deploy leaves both API keys empty.
    for name, parameter in parameters.items():
        if name != "TelegramBotToken":
            assert "Default" in parameter, f"parameter {name} has no default"


def test_outputs(template):
    expected = {
        "WineToolsFunctionName",
        "WineToolsFunctionArn",
        "ImagesBucketName",
        "DatabaseEndpoint",
        "DatabaseSecretArn",
        "VpcId",
        "WebhookUrl",
        "TurnQueueUrl",
        "DeadLetterQueueUrl",
        "BotSecretsArn",
        "ModelKeysSecretArn",
        "HealthUrl",
        "AlarmTopicArn",
        "DashboardUrl",
    }
    assert expected <= set(template["Outputs"])
    outputs = template["Outputs"]
    assert outputs["DatabaseSecretArn"]["Value"] == SECRET_ARN
    assert outputs["WebhookUrl"]["Value"] == {
        "Fn::Sub": "https://${WebhookApi}.execute-api.${AWS::Region}.${AWS::URLSuffix}/telegram/webhook"
    }
    assert outputs["TurnQueueUrl"]["Value"] == {"Ref": "TurnQueue"}
    assert outputs["DeadLetterQueueUrl"]["Value"] == {"Ref": "TurnDeadLetterQueue"}
    assert outputs["BotSecretsArn"]["Value"] == BOT_SECRETS  # the ARN, never the value


# ------------------------------------------------------------------------------ storage ---


def test_images_bucket_is_private_and_encrypted(resources):
    bucket = resources["ImagesBucket"]
    assert bucket["Type"] == "AWS::S3::Bucket"
    properties = bucket["Properties"]
    assert "BucketName" not in properties  # let CloudFormation name it
    block = properties["PublicAccessBlockConfiguration"]
    for flag in ("BlockPublicAcls", "BlockPublicPolicy", "IgnorePublicAcls", "RestrictPublicBuckets"):
        assert block[flag] is True, flag
    rules = properties["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    assert rules[0]["ServerSideEncryptionByDefault"]["SSEAlgorithm"] in ("AES256", "aws:kms")
    assert properties["OwnershipControls"]["Rules"][0]["ObjectOwnership"] == "BucketOwnerEnforced"
    assert "AccessControl" not in properties


def test_images_bucket_policy_denies_plain_http(resources):
    policies = [
        p
        for p in _of_type(resources, "AWS::S3::BucketPolicy").values()
        if p["Properties"]["Bucket"] == {"Ref": "ImagesBucket"}
    ]
    assert len(policies) == 1
    statements = policies[0]["Properties"]["PolicyDocument"]["Statement"]
    tls = [
        s
        for s in statements
        if s["Effect"] == "Deny"
        and s.get("Condition", {}).get("Bool", {}).get("aws:SecureTransport") in ("false", False)
    ]
    assert tls, statements
    statement = tls[0]
    assert statement["Principal"] in ("*", {"AWS": "*"})
    assert statement["Action"] in ("s3:*", ["s3:*"])
    targets = _as_list(statement["Resource"])
    assert {"Fn::GetAtt": ["ImagesBucket", "Arn"]} in targets  # the bucket itself
    assert any("/*" in str(t) for t in targets)  # and its objects
    assert not [s for s in statements if s["Effect"] == "Allow" and s.get("Principal") in ("*", {"AWS": "*"})]


# ------------------------------------------------------------------------------ network ---


def test_no_internet_gateway_and_no_nat(resources):
    forbidden = {
        "AWS::EC2::NatGateway",
        "AWS::EC2::InternetGateway",
        "AWS::EC2::VPCGatewayAttachment",
        "AWS::EC2::EgressOnlyInternetGateway",
        "AWS::EC2::EIP",
    }
    assert not [name for name, r in resources.items() if r["Type"] in forbidden]
    for name, route in _of_type(resources, "AWS::EC2::Route").items():
        assert "GatewayId" not in route["Properties"] and "NatGatewayId" not in route["Properties"], name


def test_vpc_has_two_private_subnets_in_two_azs(resources):
    vpc = resources["Vpc"]["Properties"]
    assert vpc["CidrBlock"] == "10.20.0.0/16"
    assert vpc["EnableDnsSupport"] is True and vpc["EnableDnsHostnames"] is True
    subnets = _of_type(resources, "AWS::EC2::Subnet")
    assert len(subnets) == 2
    zones = sorted(s["Properties"]["AvailabilityZone"]["Fn::Select"][0] for s in subnets.values())
    assert zones == [0, 1]
    for subnet in subnets.values():
        assert subnet["Properties"].get("MapPublicIpOnLaunch", False) is False


def test_database_accepts_postgres_only_from_the_function_security_groups(resources):
    group = resources["DatabaseSecurityGroup"]["Properties"]
    assert [
        (r["IpProtocol"], r["FromPort"], r["ToPort"], r["SourceSecurityGroupId"]) for r in group["SecurityGroupIngress"]
    ] == [
        ("tcp", 5432, 5432, {"Ref": "FunctionSecurityGroup"}),
        ("tcp", 5432, 5432, {"Ref": "MigrateSecurityGroup"}),
    ]
    standalone = _of_type(resources, "AWS::EC2::SecurityGroupIngress")
    assert not [r for r in standalone.values() if r["Properties"].get("GroupId") == {"Ref": "DatabaseSecurityGroup"}]


def test_secrets_manager_interface_endpoint(resources):
    endpoints = [
        e["Properties"]
        for e in _of_type(resources, "AWS::EC2::VPCEndpoint").values()
        if "secretsmanager" in str(e["Properties"]["ServiceName"])
    ]
    assert len(endpoints) == 1
    endpoint = endpoints[0]
    assert endpoint["VpcEndpointType"] == "Interface"
    assert endpoint["PrivateDnsEnabled"] is True
    assert endpoint["SubnetIds"] == [{"Ref": "PrivateSubnetA"}, {"Ref": "PrivateSubnetB"}]
    group_ref = endpoint["SecurityGroupIds"][0]["Ref"]
    ingress = resources[group_ref]["Properties"]["SecurityGroupIngress"]
    vpc_range = resources["Vpc"]["Properties"]["CidrBlock"]
    assert [(r["FromPort"], r["ToPort"], r["CidrIp"]) for r in ingress] == [(443, 443, vpc_range)]


def test_the_tool_functions_https_goes_only_to_the_secrets_endpoint(resources):
    """Its security group allows 443 to the Secrets Manager endpoint's group, not to anywhere."""
    egress = resources["FunctionSecurityGroup"]["Properties"]["SecurityGroupEgress"]
    vpc_range = resources["Vpc"]["Properties"]["CidrBlock"]
    assert [(r["FromPort"], r.get("CidrIp") or r.get("DestinationSecurityGroupId")) for r in egress] == [
        (5432, vpc_range),
        (443, {"Ref": "EndpointSecurityGroup"}),
    ]
    assert not [r for r in egress if r.get("CidrIp") == "0.0.0.0/0"]
    assert resources["WineToolsFunction"]["Properties"]["VpcConfig"]["SecurityGroupIds"] == [
        {"Ref": "FunctionSecurityGroup"}
    ]
    # Only the migrate function answers CloudFormation through S3 (the gateway endpoint's public ranges).
    assert resources["MigrateFunction"]["Properties"]["VpcConfig"]["SecurityGroupIds"] == [
        {"Ref": "MigrateSecurityGroup"}
    ]


def test_s3_gateway_endpoint_lets_the_custom_resource_answer(resources):
    """A VPC function with no NAT can reach CloudFormation's pre-signed S3 URL only this way."""
    gateways = [
        e["Properties"]
        for e in _of_type(resources, "AWS::EC2::VPCEndpoint").values()
        if e["Properties"].get("VpcEndpointType") == "Gateway"
    ]
    assert any(".s3" in str(g["ServiceName"]) for g in gateways)
    associations = _of_type(resources, "AWS::EC2::SubnetRouteTableAssociation")
    assert {a["Properties"]["SubnetId"]["Ref"] for a in associations.values()} == {"PrivateSubnetA", "PrivateSubnetB"}


# ------------------------------------------------------------------------------ database --


def test_aurora_serverless_v2_scales_to_zero_with_a_managed_secret(resources, template):
    cluster = resources["DatabaseCluster"]
    assert cluster["DeletionPolicy"] == "Snapshot"
    assert cluster["UpdateReplacePolicy"] == "Snapshot"
    properties = cluster["Properties"]
    assert properties["Engine"] == "aurora-postgresql"
    assert properties["EngineVersion"] == {"Ref": "AuroraEngineVersion"}
    engine_version = template["Parameters"]["AuroraEngineVersion"]
    major, minor = (int(x) for x in str(engine_version["Default"]).split(".")[:2])
    assert (major, minor) >= (16, 3)  # scaling to 0 ACU needs 16.3+
    scaling = properties["ServerlessV2ScalingConfiguration"]
    assert scaling["MinCapacity"] == {"Ref": "AuroraMinCapacity"}
    assert str(template["Parameters"]["AuroraMinCapacity"]["Default"]) == "0"
    assert scaling["MaxCapacity"] == {"Ref": "AuroraMaxCapacity"}
    assert properties["ManageMasterUserPassword"] is True
    assert "MasterUserPassword" not in properties
    assert properties["StorageEncrypted"] is True
    assert properties["EnableHttpEndpoint"] is False
    assert properties["DeletionProtection"] == {"Ref": "DatabaseDeletionProtection"}
    instances = _of_type(resources, "AWS::RDS::DBInstance")
    assert [i["Properties"]["DBInstanceClass"] for i in instances.values()] == ["db.serverless"]
    for instance in instances.values():
        assert instance["Properties"]["DBClusterIdentifier"] == {"Ref": "DatabaseCluster"}
        assert instance["Properties"].get("PubliclyAccessible") is False
        # Security and bug-fix minor versions arrive in the maintenance window.
        assert instance["Properties"]["AutoMinorVersionUpgrade"] is True
    assert properties["EnableCloudwatchLogsExports"] == ["postgresql"]  # the server's log in CloudWatch


def test_migrations_custom_resource(resources):
    migrations = resources["DatabaseMigrations"]
    assert migrations["Type"] == "Custom::DatabaseMigrations"
    assert migrations["Properties"]["ServiceToken"] == {"Fn::GetAtt": ["MigrateFunction", "Arn"]}
    assert "SchemaVersion" in migrations["Properties"]
    assert {"DatabaseInstance", "SecretsManagerEndpoint"} <= set(_as_list(migrations["DependsOn"]))
    migrate = resources["MigrateFunction"]["Properties"]
    assert migrate["Handler"] == "app.handler"
    assert migrate["Timeout"] == 300


# ------------------------------------------------------------------------------ functions -


def test_every_function_uses_the_shared_layer(resources):
    layer = resources["SommelierLayer"]
    assert layer["Type"] == "AWS::Serverless::LayerVersion"
    assert layer["Properties"]["ContentUri"] == "layers/sommelier"
    assert layer["Properties"]["CompatibleRuntimes"] == ["python3.12"]
    # One architecture: the Makefile builds what BuildArchitecture says, and every function runs it.
    assert layer["Metadata"] == {"BuildMethod": "makefile", "BuildArchitecture": "arm64"}
    assert layer["Properties"]["CompatibleArchitectures"] == ["arm64"]
    functions = _functions(resources)
    assert {"WineToolsFunction", "MigrateFunction", *TELEGRAM_FUNCTIONS} <= set(functions)
    for name, function in functions.items():
        assert {"Ref": "SommelierLayer"} in function["Properties"].get("Layers", []), name


def test_layer_makefile_builds_for_the_lambda_runtime(tmp_path):
    """`sam build` runs `build-<logical id>` in the layer's Makefile: arm64 wheels for python3.12, our
    package copied in, everything compiled to unchecked-hash bytecode (checked here as a dry run)."""
    layer_dir = Path(__file__).resolve().parents[2] / "layers" / "sommelier"
    plan = subprocess.run(
        ["make", "-n", "-C", str(layer_dir), "build-SommelierLayer", f"ARTIFACTS_DIR={tmp_path}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "--platform manylinux_2_28_aarch64 --platform manylinux_2_17_aarch64" in plan
    assert "--python-version 3.12" in plan
    assert "--only-binary=:all: -r requirements.txt -c requirements.lock" in plan
    assert "rds-ca-bundle.pem" in plan  # the CA of sslmode=verify-full
    assert f'cp -R sommelier "{tmp_path}/python/sommelier"' in plan
    assert "compileall" in plan and "--invalidation-mode unchecked-hash" in plan
    assert not list(tmp_path.iterdir())  # a dry run builds nothing


def test_database_functions_run_in_the_private_subnets(resources):
    for name, function in _functions(resources).items():
        variables = function["Properties"].get("Environment", {}).get("Variables", {})
        if "DATABASE_SECRET_ARN" not in variables:
            continue
        vpc = function["Properties"].get("VpcConfig")
        assert vpc, f"{name} reads the database secret but is not in the VPC"
        assert vpc["SubnetIds"] == [{"Ref": "PrivateSubnetA"}, {"Ref": "PrivateSubnetB"}]
        assert vpc["SecurityGroupIds"] in ([{"Ref": "FunctionSecurityGroup"}], [{"Ref": "MigrateSecurityGroup"}])


def test_wine_tools_function_environment_and_vpc(resources):
    properties = resources["WineToolsFunction"]["Properties"]
    assert properties["CodeUri"] == "functions/wine_tools"
    assert properties["Handler"] == "app.handler"
    # Room for an Aurora resume from 0 ACU: ~15 s usually, longer after a long pause.
    assert properties["Timeout"] == 60
    variables = properties["Environment"]["Variables"]
    assert int(variables["DATABASE_CONNECT_TIMEOUT_S"]) + 10 <= properties["Timeout"]
    assert variables["DATABASE_SSLMODE"] == "verify-full"  # the server's certificate is checked
    assert properties["MemorySize"] == 512
    assert "VpcConfig" in properties
    assert {k: v for k, v in variables.items() if k not in ("DATABASE_CONNECT_TIMEOUT_S", "DATABASE_SSLMODE")} == {
        "DATABASE_URL": "",  # empty = unset in AWS; overridable by `sam local invoke --env-vars`
        "DATABASE_SECRET_ARN": APP_SECRET_ARN,  # its own user, not the master (no DDL rights)
        "DATABASE_HOST": {"Fn::GetAtt": ["DatabaseCluster", "Endpoint.Address"]},
        "DATABASE_PORT": {"Fn::GetAtt": ["DatabaseCluster", "Endpoint.Port"]},
        "DATABASE_NAME": {"Ref": "DatabaseName"},
    }


def test_secret_access_is_scoped_to_the_database_secrets(resources):
    """The tool function reads only its own (data-only) user's secret; the master secret is for migrations."""
    expected = {"WineToolsFunction": [APP_SECRET_ARN], "MigrateFunction": [SECRET_ARN, APP_SECRET_ARN]}
    for name, secrets in expected.items():
        policies = resources[name]["Properties"]["Policies"]
        statements = [s for p in policies for s in p["Statement"]]
        assert statements, name
        for statement in statements:
            assert statement["Effect"] == "Allow"
            assert _as_list(statement["Action"]) == ["secretsmanager:GetSecretValue"], name
            assert _as_list(statement["Resource"]) == secrets, name
    assert _variables(resources, "MigrateFunction")["APP_DATABASE_SECRET_ARN"] == APP_SECRET_ARN
    secret = resources["AppDatabaseSecret"]["Properties"]
    assert "SecretString" not in secret  # generated, never a literal
    generated = secret["GenerateSecretString"]
    assert json.loads(generated["SecretStringTemplate"]) == {"username": "sommelier_app_user"}
    assert generated["GenerateStringKey"] == "password" and generated["PasswordLength"] >= 32
    assert resources["DatabaseMigrations"]["Properties"]["AppDatabaseSecretArn"] == APP_SECRET_ARN


def test_no_function_is_granted_wildcards(resources):
    for name, function in _functions(resources).items():
        for policy in function["Properties"].get("Policies", []):
            if isinstance(policy, str):  # an AWS managed policy by name
                assert "FullAccess" not in policy, (name, policy)
                continue
            for statement in policy.get("Statement", []):
                assert "*" not in _as_list(statement.get("Action")), name
                assert "*" not in _as_list(statement.get("Resource")), name


# ------------------------------------------------------------------------------ telegram --


def _variables(resources: dict, name: str) -> dict:
    return resources[name]["Properties"].get("Environment", {}).get("Variables", {})


def _statements(resources: dict, name: str) -> list[dict]:
    policies = resources[name]["Properties"].get("Policies", [])
    return [s for p in policies if isinstance(p, dict) for s in p.get("Statement", [])]


def _refs(node) -> set[str]:
    """Every name a node refers to: Ref, GetAtt and ${...} inside Sub."""
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "Ref" and isinstance(value, str):
                found.add(value)
            elif key == "Fn::GetAtt":
                found.add(value[0] if isinstance(value, list) else str(value).split(".")[0])
            elif key == "Fn::Sub":
                text = value[0] if isinstance(value, list) else value
                found |= {n.split(".")[0] for n in re.findall(r"\$\{([^!}][^}]*)\}", text)}
            found |= _refs(value)
    elif isinstance(node, list):
        for item in node:
            found |= _refs(item)
    return found


def _strings(node):
    if isinstance(node, dict):
        for key, value in node.items():
            yield str(key)
            yield from _strings(value)
    elif isinstance(node, list):
        for item in node:
            yield from _strings(item)
    elif isinstance(node, str):
        yield node


def test_telegram_functions_run_outside_the_vpc(resources):
    """They reach Telegram and the LLM without a NAT gateway (docs/architecture.md)."""
    for name in TELEGRAM_FUNCTIONS:
        assert "VpcConfig" not in resources[name]["Properties"], name
        assert "DATABASE_SECRET_ARN" not in _variables(resources, name), name


def test_webhook_function(resources):
    properties = resources["WebhookFunction"]["Properties"]
    assert properties["CodeUri"] == "functions/webhook"
    assert properties["Handler"] == "ingress.handler"
    assert properties["MemorySize"] == 256
    assert properties["Timeout"] == 10
    assert _variables(resources, "WebhookFunction") == {
        "QUEUE_URL": {"Ref": "TurnQueue"},
        "IDEMPOTENCY_TABLE": {"Ref": "IdempotencyTable"},
        # Internet-facing: only the webhook secret, never the bot token or the LLM keys.
        "TELEGRAM_WEBHOOK_SECRET_ARN": WEBHOOK_SECRET,
        "TELEGRAM_WEBHOOK_SECRET": "",  # empty = read from the secret
        # Without the token it can't ask getMe: the username decides "addressed to the bot" at the edge.
        "TELEGRAM_BOT_USERNAME": {"Ref": "BotUsername"},
    }
    assert _variables(resources, "AgentFunction")["TELEGRAM_BOT_USERNAME"] == {"Ref": "BotUsername"}
    events = properties["Events"]
    routes = set()
    for event in events.values():
        assert event["Type"] == "HttpApi"
        assert event["Properties"]["ApiId"] == {"Ref": "WebhookApi"}
        assert str(event["Properties"].get("PayloadFormatVersion", "2.0")) == "2.0"
        routes.add((event["Properties"]["Method"], event["Properties"]["Path"]))
    # The Starlette app (Mangum handler) serves exactly these paths.
    from sommelier.edge.app import HEALTH_PATH, WEBHOOK_PATH

    assert routes == {("POST", WEBHOOK_PATH), ("GET", HEALTH_PATH)}


def test_webhook_api_uses_the_default_stage(resources):
    api = resources["WebhookApi"]
    assert api["Type"] == "AWS::Serverless::HttpApi"
    # WebhookUrl has no stage prefix: only the $default stage serves it.
    assert api["Properties"].get("StageName", "$default") == "$default"


def test_agent_function(resources, template):
    properties = resources["AgentFunction"]["Properties"]
    assert properties["CodeUri"] == "functions/webhook"
    assert properties["Handler"] == "agent.handler"
    assert properties["Timeout"] == {"Ref": "AgentTimeoutSeconds"}
    assert properties["MemorySize"] == 1024
    variables = _variables(resources, "AgentFunction")
    assert variables["TOOL_FUNCTION_NAME"] == {"Ref": "WineToolsFunction"}
    assert variables["IDEMPOTENCY_TABLE"] == {"Ref": "IdempotencyTable"}
    assert variables["IMAGES_BUCKET"] == {"Ref": "ImagesBucket"}
    assert variables["SOMMELIER_SECRETS_ARN"] == BOT_SECRETS
    assert variables["MODEL_KEYS_SECRET_ARN"] == MODEL_KEYS
    assert variables["OPENAI_BASE_URL"] == {"Ref": "OpenAIBaseUrl"}
    assert variables["LLM_MODEL"] == {"Ref": "LLMModel"}
    assert variables["EMBEDDING_PROVIDER"] == "openai"
    assert variables["EMBEDDING_MODEL"] == {"Ref": "EmbeddingModel"}
    assert variables["EMBEDDING_BASE_URL"] == {"Ref": "EmbeddingBaseUrl"}
    assert variables["RATE_LIMIT_PER_MINUTE"] == {"Ref": "RatePerMinute"}
    assert variables["QUEUE_URL"] == {"Ref": "TurnQueue"}  # to shorten the retry delay of a failed turn
    max_receives = resources["TurnQueue"]["Properties"]["RedrivePolicy"]["maxReceiveCount"]
    assert int(variables["SQS_MAX_RECEIVES"]) == int(max_receives) == 5
    parameters = template["Parameters"]
    assert parameters["LLMModel"]["Default"] == "anthropic/claude-sonnet-4"
    assert parameters["OpenAIBaseUrl"]["Default"] == "https://openrouter.ai/api/v1"
    assert parameters["EmbeddingBaseUrl"]["Default"] == "https://api.openai.com/v1"
    assert str(parameters["RatePerMinute"]["Default"]) == "10"
    assert str(parameters["AgentTimeoutSeconds"]["Default"]) == "120"
    assert parameters["SetWebhookOnDeploy"]["Default"] == "true"  # a first deploy that answers
    # The trigger is an explicit event source mapping, not a SAM `Events: Type: SQS` (which would also
    # attach AWSLambdaSQSQueueExecutionRole: sqs:ReceiveMessage/DeleteMessage on every queue).
    assert "Events" not in properties
    mappings = _of_type(resources, "AWS::Lambda::EventSourceMapping")
    assert len(mappings) == 1
    mapping = next(iter(mappings.values()))["Properties"]
    assert mapping["FunctionName"] == {"Ref": "AgentFunction.Alias"}  # the canary's share of the turns
    assert mapping["EventSourceArn"] == {"Fn::GetAtt": ["TurnQueue", "Arn"]}
    assert mapping["BatchSize"] == 1
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["ScalingConfig"] == {"MaximumConcurrency": {"Ref": "AgentMaxConcurrency"}}
    concurrency = parameters["AgentMaxConcurrency"]
    assert 2 <= int(concurrency["Default"]) and int(concurrency["MinValue"]) == 2  # SQS's minimum


def test_turn_queue_is_fifo_with_a_dead_letter_queue(resources, template):
    queue = resources["TurnQueue"]["Properties"]
    assert queue["FifoQueue"] is True
    assert queue["ContentBasedDeduplication"] is False  # the dedup id is the update_id
    assert queue["SqsManagedSseEnabled"] is True
    assert queue["RedrivePolicy"]["deadLetterTargetArn"] == {"Fn::GetAtt": ["TurnDeadLetterQueue", "Arn"]}
    assert int(queue["RedrivePolicy"]["maxReceiveCount"]) >= 5  # AWS's advice with a Lambda trigger
    dlq = resources["TurnDeadLetterQueue"]["Properties"]
    assert dlq["FifoQueue"] is True  # a FIFO queue's DLQ must be FIFO too
    assert dlq["SqsManagedSseEnabled"] is True
    assert int(dlq["MessageRetentionPeriod"]) == 14 * 24 * 3600
    assert "QueueName" not in queue and "QueueName" not in dlq  # CloudFormation adds ".fifo"


def test_visibility_timeout_is_at_least_six_times_the_agent_timeout(resources, template):
    """AWS: a queue's visibility timeout should be >= 6x the timeout of the function it feeds."""
    visibility = int(resources["TurnQueue"]["Properties"]["VisibilityTimeout"])
    timeout = resources["AgentFunction"]["Properties"]["Timeout"]
    if isinstance(timeout, dict):  # !Ref AgentTimeoutSeconds: every allowed value must fit
        parameter = template["Parameters"][timeout["Ref"]]
        assert "MaxValue" in parameter, "the agent timeout parameter needs a MaxValue"
        worst = max(int(parameter["MaxValue"]), int(parameter["Default"]))
    else:
        worst = int(timeout)
    assert visibility >= 6 * worst, (visibility, worst)


def test_idempotency_table(resources):
    table = resources["IdempotencyTable"]["Properties"]
    assert table["BillingMode"] == "PAY_PER_REQUEST"
    assert table["KeySchema"] == [{"AttributeName": "id", "KeyType": "HASH"}]
    assert table["AttributeDefinitions"] == [{"AttributeName": "id", "AttributeType": "S"}]
    assert table["TimeToLiveSpecification"] == {"AttributeName": "expiration", "Enabled": True}
    assert table["SSESpecification"]["SSEEnabled"] is True
    assert table["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
    assert "TableName" not in table


def test_the_token_and_the_model_keys_live_in_separate_secrets(resources):
    bot = resources["BotSecrets"]
    assert bot["Type"] == "AWS::SecretsManager::Secret"
    assert "GenerateSecretString" not in bot["Properties"]  # nothing in it is regenerated on update
    token_text = bot["Properties"]["SecretString"]["Fn::Sub"]
    assert json.loads(re.sub(r"\$\{(\w+)\}", "x", token_text)) == {"telegram_bot_token": "x"}
    assert re.findall(r"\$\{([^}]+)\}", token_text) == ["TelegramBotToken"]
    keys = resources["ModelKeysSecret"]
    assert keys["Type"] == "AWS::SecretsManager::Secret"
    assert "GenerateSecretString" not in keys["Properties"]
    # Built from parameters, never a literal; "none" (for `sam deploy --guided`) is stored as empty.
    template_text, variables = keys["Properties"]["SecretString"]["Fn::Sub"]
    document = json.loads(re.sub(r"\$\{(\w+)\}", "x", template_text))
    assert set(document) == {"openai_api_key", "embedding_api_key"}
    assert variables == {
        "OpenAIKey": {"Fn::If": ["NoOpenAIApiKey", "", {"Ref": "OpenAIApiKey"}]},
        "EmbeddingKey": {"Fn::If": ["NoEmbeddingApiKey", "", {"Ref": "EmbeddingApiKey"}]},
    }
    names = {n.split(".")[0] for n in re.findall(r"\$\{([^}]+)\}", template_text)}
    assert names == {"OpenAIKey", "EmbeddingKey"}


def test_webhook_secret_token_is_generated_once_in_its_own_secret(resources):
    """Generated apart from the parameters, so a new bot token or API key never regenerates it."""
    properties = resources["WebhookSecretToken"]["Properties"]
    assert "SecretString" not in properties
    generated = properties["GenerateSecretString"]
    assert generated["SecretStringTemplate"] == "{}"  # no parameter feeds it
    assert generated["GenerateStringKey"] == "telegram_webhook_secret"
    assert generated["PasswordLength"] == 48
    assert generated["ExcludePunctuation"] is True  # Telegram allows only A-Z a-z 0-9 _ -
    assert generated.get("IncludeSpace", False) is False
    readers = {
        name
        for name, resource in resources.items()
        if resource["Type"] == "AWS::Serverless::Function"
        and {"Ref": "WebhookSecretToken"}
        in json.loads(json.dumps(resource["Properties"].get("Environment", {}).get("Variables", {}))).values()
    }
    assert readers == {"WebhookFunction", "SetWebhookFunction"}  # the agent never needs it
    expected = {
        "WebhookFunction": [{"Ref": "WebhookSecretToken"}],  # internet-facing: the webhook secret only
        "SetWebhookFunction": [[{"Ref": "BotSecrets"}, {"Ref": "WebhookSecretToken"}]],
    }
    for name in readers:
        statements = resources[name]["Properties"]["Policies"][0]["Statement"]
        granted = [s["Resource"] for s in statements if s["Action"] == "secretsmanager:GetSecretValue"]
        assert granted == expected[name], name


def test_every_function_logs_to_a_group_that_expires(template, resources):
    functions = {name: r for name, r in resources.items() if r["Type"] == "AWS::Serverless::Function"}
    assert len(functions) == 9
    for _name, function in functions.items():
        group = function["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
        assert resources[group]["Type"] == "AWS::Logs::LogGroup"
        assert resources[group]["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}
        assert resources[group].get("Condition") == function.get("Condition")
    assert str(template["Parameters"]["LogRetentionDays"]["Default"]) == "30"


def test_secret_parameters_feed_only_the_bot_secret(template):
    """NoEcho values must not reach an environment variable, an output or metadata."""
    users: dict[str, set[str]] = {name: set() for name in SECRET_PARAMETERS}
    for section in ("Globals", "Outputs", "Conditions"):
        for name in _refs(template.get(section, {})) & SECRET_PARAMETERS:
            users[name].add(section)
    for logical_id, resource in template["Resources"].items():
        for name in _refs(resource) & SECRET_PARAMETERS:
            users[name].add(logical_id)
    # The two API keys also feed the conditions that turn "none" into an empty value in BotSecrets.
    conditions = template["Conditions"]
    assert _refs(conditions["NoOpenAIApiKey"]) == {"OpenAIApiKey"}
    assert _refs(conditions["NoEmbeddingApiKey"]) == {"EmbeddingApiKey"}
    assert users == {
        "TelegramBotToken": {"BotSecrets"},
        "OpenAIApiKey": {"ModelKeysSecret", "Conditions"},
        "EmbeddingApiKey": {"ModelKeysSecret", "Conditions"},
    }
    for resource in template["Resources"].values():
        assert not (_refs(resource.get("Metadata", {})) & SECRET_PARAMETERS)


def test_no_secret_appears_as_a_literal_value(template):
    looks_secret = [
        re.compile(r"\b\d{6,}:[A-Za-z0-9_-]{30,}\b"),  # a Telegram bot token
        re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"),  # OpenAI / OpenRouter keys
        re.compile(r"\bAKIA[0-9A-Z]{16}\b"),  # AWS access keys
    ]
    for text in _strings(template):
        for pattern in looks_secret:
            assert not pattern.search(text), text
    # Secret-like environment variables are declared empty (read from Secrets Manager) or absent.
    containers = [template["Globals"]["Function"], *template["Resources"].values()]
    for container in containers:
        variables = (container.get("Properties", container).get("Environment") or {}).get("Variables", {})
        for name, value in variables.items():
            if re.search(r"(TOKEN|SECRET|API_KEY|PASSWORD)$", name):
                assert value == "", (name, value)


def test_telegram_iam_statements_are_scoped_to_one_resource_each(resources):
    """No "*" anywhere; every action goes to the one resource it needs (SAM adds logs/X-Ray itself)."""
    images_objects = {"Fn::Sub": "${ImagesBucket.Arn}/wines/*"}  # the photos, never the raw uploads
    allowed = {
        "sqs:SendMessage": [{"Fn::GetAtt": ["TurnQueue", "Arn"]}],
        "dynamodb:GetItem": [TABLE_ARN],
        "dynamodb:PutItem": [TABLE_ARN],
        "dynamodb:UpdateItem": [TABLE_ARN],
        "dynamodb:DeleteItem": [TABLE_ARN],
        "secretsmanager:GetSecretValue": [BOT_SECRETS],
        "lambda:InvokeFunction": [{"Fn::GetAtt": ["WineToolsFunction", "Arn"]}],
        "s3:GetObject": [images_objects],
        "sqs:ReceiveMessage": [{"Fn::GetAtt": ["TurnQueue", "Arn"]}],
        "sqs:DeleteMessage": [{"Fn::GetAtt": ["TurnQueue", "Arn"]}],
        "sqs:GetQueueAttributes": [{"Fn::GetAtt": ["TurnQueue", "Arn"]}],
        "sqs:ChangeMessageVisibility": [{"Fn::GetAtt": ["TurnQueue", "Arn"]}],
    }
    expected_actions = {
        "WebhookFunction": {
            "sqs:SendMessage",
            "dynamodb:GetItem",
            "dynamodb:PutItem",
            "dynamodb:UpdateItem",
            "dynamodb:DeleteItem",
            "secretsmanager:GetSecretValue",
        },
        "AgentFunction": {
            "lambda:InvokeFunction",
            "s3:GetObject",
            "dynamodb:GetItem",
            "dynamodb:PutItem",
            "dynamodb:UpdateItem",
            "dynamodb:DeleteItem",
            "secretsmanager:GetSecretValue",
            "sqs:ReceiveMessage",
            "sqs:DeleteMessage",
            "sqs:GetQueueAttributes",
            "sqs:ChangeMessageVisibility",
        },
        "SetWebhookFunction": {"secretsmanager:GetSecretValue"},
    }
    # Only the functions that check or register the webhook read its secret token.
    secrets_read = {
        "WebhookFunction": [WEBHOOK_SECRET],
        "AgentFunction": [BOT_SECRETS, MODEL_KEYS],
        "SetWebhookFunction": [BOT_SECRETS, WEBHOOK_SECRET],
    }
    for name, actions in expected_actions.items():
        policies = resources[name]["Properties"]["Policies"]
        assert all(isinstance(p, dict) for p in policies), f"{name}: no managed/SAM policy templates"
        granted: set[str] = set()
        for statement in _statements(resources, name):
            assert statement["Effect"] == "Allow", name
            assert "NotAction" not in statement and "NotResource" not in statement, name
            targets = _as_list(statement["Resource"])
            for action in _as_list(statement["Action"]):
                assert "*" not in action, (name, action)
                assert action in allowed, (name, action)
                expected = secrets_read[name] if action == "secretsmanager:GetSecretValue" else allowed[action]
                if name == "AgentFunction" and statement.get("Sid") == "StartTheReport":
                    expected = [{"Fn::GetAtt": ["WeeklyReportFunction", "Arn"]}]  # /report in the admin chat
                assert targets == expected, (name, action, targets)
                granted.add(action)
            for target in targets:
                assert isinstance(target, dict), (name, target)  # a reference, never a literal ARN
                assert target == images_objects or "*" not in json.dumps(target), (name, target)
        assert granted == actions, name


def test_set_webhook_custom_resource_is_optional(resources, template):
    assert template["Conditions"]["SetWebhookOnDeployEnabled"] == {
        "Fn::Equals": [{"Ref": "SetWebhookOnDeploy"}, "true"]
    }
    assert template["Parameters"]["SetWebhookOnDeploy"]["AllowedValues"] == ["true", "false"]
    function = resources["SetWebhookFunction"]
    assert function["Condition"] == "SetWebhookOnDeployEnabled"
    assert function["Properties"]["CodeUri"] == "functions/set_webhook"
    assert function["Properties"]["Handler"] == "app.handler"
    assert _variables(resources, "SetWebhookFunction") == {
        "SOMMELIER_SECRETS_ARN": BOT_SECRETS,
        "TELEGRAM_WEBHOOK_SECRET_ARN": WEBHOOK_SECRET,
        # Empty (from the secrets, the real Bot API); declared for `sam local invoke` (make sam-test).
        "TELEGRAM_BOT_TOKEN": "",
        "TELEGRAM_WEBHOOK_SECRET": "",
        "TELEGRAM_API_BASE_URL": "",
    }
    webhook = resources["TelegramWebhook"]
    assert webhook["Type"] == "Custom::TelegramWebhook"
    assert webhook["Condition"] == "SetWebhookOnDeployEnabled"
    properties = webhook["Properties"]
    assert properties["ServiceToken"] == {"Fn::GetAtt": ["SetWebhookFunction", "Arn"]}
    assert properties["Url"] == template["Outputs"]["WebhookUrl"]["Value"]
    assert "AllowedUpdates" not in properties  # one list, in sommelier.telegram.router
    assert properties["Registration"] == {"Ref": "SommelierLayer"}  # a new layer re-registers
    assert not (_refs(properties) & SECRET_PARAMETERS)
    assert (ROOT / "functions" / "set_webhook" / "app.py").exists()


# ------------------------------------------------------------------------------ first week --


def test_aurora_capacity_and_server_settings(resources, template):
    parameters = template["Parameters"]
    steps = [float(v) for v in parameters["AuroraMaxCapacity"]["AllowedValues"]]
    assert steps == [x / 2 for x in range(2, 33)]  # 1-16 in Aurora's 0.5 ACU steps, nothing else
    assert float(parameters["AuroraMaxCapacity"]["Default"]) in steps
    assert re.fullmatch(parameters["AuroraEngineVersion"]["AllowedPattern"], "16.9")
    assert not re.fullmatch(parameters["AuroraEngineVersion"]["AllowedPattern"], "15.4")
    cluster = resources["DatabaseCluster"]["Properties"]
    group = resources[cluster["DBClusterParameterGroupName"]["Ref"]]
    assert group["Type"] == "AWS::RDS::DBClusterParameterGroup"
    assert group["Properties"]["Family"] == "aurora-postgresql16"
    settings = group["Properties"]["Parameters"]
    # The server closes idle sessions, so frozen Lambda pools can't keep the cluster from pausing.
    idle_ms = int(settings["idle_session_timeout"])
    assert 0 < idle_ms <= int(parameters["AuroraSecondsUntilAutoPause"]["MinValue"]) * 1000
    assert settings["rds.force_ssl"] == "1"


def test_the_database_functions_verify_the_server_certificate(resources):
    for name in ("WineToolsFunction", "MigrateFunction"):
        assert _variables(resources, name)["DATABASE_SSLMODE"] == "verify-full", name


def test_the_webhook_is_registered_only_after_the_migrations(resources):
    assert "DatabaseMigrations" in _as_list(resources["TelegramWebhook"]["DependsOn"])


def test_an_offline_deploy_needs_no_api_key(template):
    for name in ("OpenAIApiKey", "EmbeddingApiKey"):
        parameter = template["Parameters"][name]
        assert parameter["Default"] == ""
        assert re.fullmatch(parameter["AllowedPattern"], "none")  # what `sam deploy --guided` can take
        assert "none" in parameter["Description"]


def test_alarms_go_to_a_topic_with_an_optional_email(resources, template):
    topic = {"Ref": "AlarmTopic"}
    assert resources["AlarmTopic"]["Type"] == "AWS::SNS::Topic"
    subscription = resources["AlarmEmailSubscription"]
    assert subscription["Condition"] == "AlarmEmailGiven"
    assert subscription["Properties"] == {"TopicArn": topic, "Protocol": "email", "Endpoint": {"Ref": "AlarmEmail"}}
    email = template["Parameters"]["AlarmEmail"]
    assert email["Default"] == ""
    assert re.fullmatch(email["AllowedPattern"], "") and re.fullmatch(email["AllowedPattern"], "shop@example.com")
    assert not re.fullmatch(email["AllowedPattern"], "not an address")

    dlq = resources["DeadLetterQueueAlarm"]["Properties"]
    assert dlq["Namespace"] == "AWS/SQS" and dlq["MetricName"] == "ApproximateNumberOfMessagesVisible"
    assert dlq["Dimensions"] == [{"Name": "QueueName", "Value": {"Fn::GetAtt": ["TurnDeadLetterQueue", "QueueName"]}}]
    assert dlq["Threshold"] == 1 and dlq["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
    assert dlq["AlarmActions"] == [topic]

    errors = resources["AgentErrorRateAlarm"]["Properties"]
    queries = {query["Id"]: query for query in errors["Metrics"]}
    assert [q["Id"] for q in errors["Metrics"] if q.get("ReturnData", True)] == ["errorRate"]
    for metric_id in ("crashes", "errorLogs", "invocations"):
        assert metric_id in queries["errorRate"]["Expression"]
    assert queries["crashes"]["MetricStat"]["Metric"]["Dimensions"] == [
        {"Name": "FunctionName", "Value": {"Ref": "AgentFunction"}}
    ]
    # A failed turn is a batch item failure (not a Lambda error), so its ERROR log line is counted.
    log_filter = resources["AgentErrorLogsMetricFilter"]["Properties"]
    assert log_filter["LogGroupName"] == {"Ref": "AgentFunctionLogs"}
    transformation = log_filter["MetricTransformations"][0]
    assert (transformation["MetricNamespace"], transformation["MetricName"]) == ("Sommelier", "AgentErrorLogs")
    assert queries["errorLogs"]["MetricStat"]["Metric"]["MetricName"] == "AgentErrorLogs"
    assert errors["AlarmActions"] == [topic]


ALARMS = {
    # alarm: (namespace, metric names it reads, the resource its dimension names)
    "DeadLetterQueueAlarm": ("AWS/SQS", {"ApproximateNumberOfMessagesVisible"}, "TurnDeadLetterQueue"),
    "AgentErrorRateAlarm": (None, {"Errors", "Invocations", "AgentErrorLogs"}, "AgentFunction"),
    "OldestTurnAgeAlarm": ("AWS/SQS", {"ApproximateAgeOfOldestMessage"}, "TurnQueue"),
    "WebhookApi5xxAlarm": ("AWS/ApiGateway", {"5xx"}, "WebhookApi"),
    "WebhookErrorsAlarm": ("AWS/Lambda", {"Errors"}, "WebhookFunction"),
    "ToolFailuresAlarm": ("AWS/Lambda", {"Errors", "Throttles"}, "WineToolsFunction"),
    "LLMDownAlarm": ("Sommelier", {"Fallback_offline_fallback", "Fallback_offline"}, None),
    "JobFailuresAlarm": ("AWS/SQS", {"ApproximateNumberOfMessagesVisible"}, "JobFailureQueue"),
    "WebhookUnsetAlarm": ("Sommelier", {"WebhookRegistered"}, None),
    "LLMBudgetAlarm": ("Sommelier", {"LLMCostUSD"}, None),
}


def _alarm_metrics(alarm: dict) -> list[dict]:
    """Each metric an alarm reads: its own, or those of its metric-math queries."""
    if "MetricName" in alarm:
        return [{k: alarm.get(k) for k in ("Namespace", "MetricName", "Dimensions")}]
    return [q["MetricStat"]["Metric"] for q in alarm["Metrics"] if "MetricStat" in q]


def test_each_alarm_watches_what_it_names_and_tells_the_one_topic(resources):
    alarms = _of_type(resources, "AWS::CloudWatch::Alarm")
    assert set(alarms) == set(ALARMS)
    for name, (namespace, metric_names, target) in ALARMS.items():
        alarm = alarms[name]["Properties"]
        assert alarm["AlarmActions"] == [{"Ref": "AlarmTopic"}] and alarm["OKActions"] == [{"Ref": "AlarmTopic"}], name
        assert len(alarm["AlarmDescription"]) > 40, name
        metrics = _alarm_metrics(alarm)
        assert {m["MetricName"] for m in metrics} == metric_names, name
        if namespace:
            assert {m["Namespace"] for m in metrics} == {namespace}, name
        for metric in metrics:
            dimensions = metric.get("Dimensions") or []
            if metric["Namespace"] == "Sommelier" and dimensions:
                assert dimensions == [{"Name": "service", "Value": "sommelier"}], name  # Powertools' dimension
            elif target and metric["Namespace"] != "Sommelier":
                assert target in _refs(dimensions), (name, dimensions)
        if "Metrics" in alarm:
            returned = [q for q in alarm["Metrics"] if q.get("ReturnData", True)]
            assert len(returned) == 1 and "Expression" in returned[0], name


def test_the_alarms_thresholds(resources, template):
    alarms = {name: r["Properties"] for name, r in _of_type(resources, "AWS::CloudWatch::Alarm").items()}
    age = alarms["OldestTurnAgeAlarm"]
    # A stalled queue is caught long before a turn could expire (the queue keeps a turn 4 days).
    retention = int(resources["TurnQueue"]["Properties"]["MessageRetentionPeriod"])
    assert age["Statistic"] == "Maximum" and 300 <= age["Threshold"] <= 3600 < retention
    # A check that stopped running leaves no data: INSUFFICIENT_DATA, told like an alarm (not "breaching",
    # which would raise a false alarm on every new stack before its first check).
    unset = alarms["WebhookUnsetAlarm"]
    assert unset["TreatMissingData"] == "missing" and unset["InsufficientDataActions"] == [{"Ref": "AlarmTopic"}]
    assert unset["ComparisonOperator"] == "LessThanThreshold"
    assert unset["Threshold"] == 1 and unset["Statistic"] == "Maximum"
    # Its schedule starts after the migrations, next to the deploy's own registration of the webhook.
    assert resources["WebhookCheckFunction"]["DependsOn"] == "DatabaseMigrations"
    assert "DatabaseMigrations" in _as_list(resources["TelegramWebhook"]["DependsOn"])
    check = resources["WebhookCheckFunction"]["Properties"]
    minutes = int(
        re.fullmatch(r"rate\((\d+) minutes\)", check["Events"]["EveryQuarterHour"]["Properties"]["Schedule"])[1]
    )
    assert minutes * 60 * 2 <= unset["Period"] * unset["EvaluationPeriods"]  # at least two checks per window
    budget = alarms["LLMBudgetAlarm"]
    assert budget["Threshold"] == {"Ref": "MonthlyLLMBudgetUSD"}
    queries = {q["Id"]: q for q in budget["Metrics"]}
    assert queries["cost"]["MetricStat"]["Period"] == 86400 and "* 30" in queries["monthAtThisRate"]["Expression"]
    assert int(template["Parameters"]["MonthlyLLMBudgetUSD"]["Default"]) > 0
    for name in ("ToolFailuresAlarm", "LLMDownAlarm"):  # a metric that never appeared is 0, not missing
        expression = next(q["Expression"] for q in alarms[name]["Metrics"] if "Expression" in q)
        assert expression.count("FILL(") == 2, name


def test_the_alarm_names_output_lists_every_alarm(template, resources):
    """`sommelier deploy check` reads the alarms' states through this output."""
    separator, names = template["Outputs"]["AlarmNames"]["Value"]["Fn::Join"]
    assert separator == ","
    assert sorted(n["Ref"] for n in names) == sorted(_of_type(resources, "AWS::CloudWatch::Alarm"))


def test_the_alarmed_metrics_are_the_ones_the_code_emits():
    from sommelier.deploy import webhook_check

    telemetry = (ROOT / "layers" / "sommelier" / "sommelier" / "observability" / "telemetry.py").read_text("utf-8")
    loop = (ROOT / "layers" / "sommelier" / "sommelier" / "agent" / "loop.py").read_text("utf-8")
    assert "f\"Fallback_{metadata['mode']}\"" in telemetry
    assert 'trace.mode = "offline_fallback"' in loop  # Fallback_offline_fallback: the LLM failed
    assert webhook_check.METRIC == "WebhookRegistered"
    if '"LLMCostUSD"' not in telemetry:
        pytest.skip("LLMCostUSD is emitted by issue 27's change (per-turn cost); not merged into this tree yet")


def test_dashboard_shows_every_alarm_and_the_first_week_figures(resources):
    """Every alarm's state, then turns, fallbacks, p95 turn time, LLM tokens and cost, the queues."""
    body_template, variables = resources["Dashboard"]["Properties"]["DashboardBody"]["Fn::Sub"]
    shown_alarms = set(re.findall(r"\$\{(\w+)\.Arn\}", body_template))
    assert shown_alarms == set(_of_type(resources, "AWS::CloudWatch::Alarm"))
    body = json.loads(re.sub(r"\$\{[^}]+\}", "x", body_template))
    assert body["widgets"][0]["type"] == "alarm"
    metrics = [m for widget in body["widgets"] if widget["type"] == "metric" for m in widget["properties"]["metrics"]]
    names = {m[1] for m in metrics if isinstance(m[0], str)}
    assert {
        "Turns",
        "TurnLatency",
        "PromptTokens",
        "CompletionTokens",
        "LLMCostUSD",
        "ApproximateNumberOfMessagesVisible",
        "ApproximateAgeOfOldestMessage",
        "5xx",
        "Throttles",
        "WebhookRegistered",
    } <= names
    stats = {w["properties"]["title"]: w["properties"].get("stat") for w in body["widgets"]}
    assert stats["Turn time p95 (ms)"] == "p95"
    assert any("Fallback" in m[0].get("expression", "") for m in metrics if isinstance(m[0], dict))
    assert variables["DeadLetterQueueName"] == {"Fn::GetAtt": ["TurnDeadLetterQueue", "QueueName"]}
    emitted = (ROOT / "layers" / "sommelier" / "sommelier" / "observability" / "telemetry.py").read_text(
        encoding="utf-8"
    )
    for name in ("Turns", "TurnLatency", "PromptTokens", "CompletionTokens", "Fallback_"):
        assert f'"{name}' in emitted or f'f"{name}' in emitted, name
    from sommelier.settings import load_settings

    assert load_settings({}).observability.metrics_namespace == "Sommelier"  # the dashboard's namespace


# ------------------------------------------------------------------------------ deploys --


def test_the_webhook_and_the_agent_deploy_gradually_with_alarms_to_roll_back(resources):
    rollback = {
        "WebhookFunction": {"WebhookApi5xxAlarm", "WebhookErrorsAlarm"},
        "AgentFunction": {"AgentErrorRateAlarm", "OldestTurnAgeAlarm"},
    }
    for name, alarms in rollback.items():
        properties = resources[name]["Properties"]
        assert properties["AutoPublishAlias"] == "live", name
        preference = properties["DeploymentPreference"]
        assert preference["Type"].startswith("Canary"), name
        assert {a["Ref"] for a in preference["Alarms"]} == alarms, name
        for alarm in alarms:
            assert resources[alarm]["Type"] == "AWS::CloudWatch::Alarm"
            # An alarm that stays in ALARM until someone acts (the DLQ) would block every deployment.
            assert alarm != "DeadLetterQueueAlarm"
    mapping = next(iter(_of_type(resources, "AWS::Lambda::EventSourceMapping").values()))
    assert mapping["Properties"]["FunctionName"] == {"Ref": "AgentFunction.Alias"}


@pytest.fixture(scope="module")
def translated(template) -> dict:
    """What SAM makes of the template (its own translator, as `sam build`/`sam deploy` run it)."""
    import os

    import samtranslator.translator.transform as translator

    copy = json.loads(json.dumps(template, default=str))
    for name, resource in copy["Resources"].items():
        properties = resource.get("Properties", {})
        for key in ("CodeUri", "ContentUri"):
            if isinstance(properties.get(key), str):
                properties[key] = f"s3://artifacts/{name}.zip"  # what `sam package` would put there

    class NoManagedPolicies:
        def load(self):
            return {}

    os.environ.setdefault("AWS_DEFAULT_REGION", "eu-central-1")
    return translator.transform(copy, {}, NoManagedPolicies())["Resources"]


@pytest.mark.gate
def test_the_translated_template_routes_traffic_through_the_aliases_with_rollback(translated):
    for function in ("WebhookFunction", "AgentFunction"):
        alias = translated[f"{function}Aliaslive"]
        assert alias["Type"] == "AWS::Lambda::Alias"
        assert alias["UpdatePolicy"]["CodeDeployLambdaAliasUpdate"]["DeploymentGroupName"] == {
            "Ref": f"{function}DeploymentGroup"
        }
        group = translated[f"{function}DeploymentGroup"]["Properties"]
        assert group["AlarmConfiguration"]["Enabled"] is True and group["AlarmConfiguration"]["Alarms"]
        assert group["AutoRollbackConfiguration"]["Enabled"] is True
        assert "DEPLOYMENT_STOP_ON_ALARM" in group["AutoRollbackConfiguration"]["Events"]
    permissions = [r["Properties"] for r in translated.values() if r["Type"] == "AWS::Lambda::Permission"]
    api = [p for p in permissions if p["Principal"] == "apigateway.amazonaws.com"]
    assert api and all(p["FunctionName"] == {"Ref": "WebhookFunctionAliaslive"} for p in api)
    mapping = next(r for r in translated.values() if r["Type"] == "AWS::Lambda::EventSourceMapping")
    assert mapping["Properties"]["FunctionName"] == {"Ref": "AgentFunctionAliaslive"}


SECRETS_READ = {
    # role: the secrets it may read - the bot token, the model keys, the webhook token, the database users
    "WebhookFunctionRole": {"WebhookSecretToken"},
    "AgentFunctionRole": {"BotSecrets", "ModelKeysSecret"},
    "CatalogDropFunctionRole": {"BotSecrets", "ModelKeysSecret"},
    "WeeklyReportFunctionRole": {"BotSecrets"},
    "SetWebhookFunctionRole": {"BotSecrets", "WebhookSecretToken"},
    "WebhookCheckFunctionRole": {"BotSecrets"},
    "AlarmNotifyFunctionRole": {"BotSecrets"},
    "WineToolsFunctionRole": {"AppDatabaseSecret"},
    "MigrateFunctionRole": {"DatabaseCluster", "AppDatabaseSecret"},  # the master (RDS-managed) secret
}


def test_each_role_reads_only_the_secrets_its_function_uses(translated):
    roles = {name: r for name, r in translated.items() if r["Type"] == "AWS::IAM::Role"}
    read: dict[str, set[str]] = {}
    for name, role in roles.items():
        for policy in role["Properties"].get("Policies", []):
            for statement in policy["PolicyDocument"]["Statement"]:
                actions = _as_list(statement["Action"])
                if any(a.startswith("secretsmanager:") for a in actions):
                    assert actions == ["secretsmanager:GetSecretValue"], (name, actions)
                    read.setdefault(name, set()).update(_refs(statement["Resource"]))
    assert read == SECRETS_READ
    # And each function is told exactly the secrets its role may read (no variable it couldn't use).
    arn_variables = ("SOMMELIER_SECRETS_ARN", "MODEL_KEYS_SECRET_ARN", "TELEGRAM_WEBHOOK_SECRET_ARN")
    arn_variables += ("DATABASE_SECRET_ARN", "APP_DATABASE_SECRET_ARN")
    for role, secrets in SECRETS_READ.items():
        function = translated[role.removesuffix("Role")]["Properties"]
        variables = function.get("Environment", {}).get("Variables", {})
        told = set().union(*(_refs(variables[v]) for v in arn_variables if v in variables))
        assert told == secrets, role


def test_the_agent_reads_photos_but_not_raw_uploads(translated, resources):
    statements = [
        s
        for p in translated["AgentFunctionRole"]["Properties"]["Policies"]
        for s in p["PolicyDocument"]["Statement"]
        if any(a.startswith("s3:") for a in _as_list(s["Action"]))
    ]
    assert [(s["Action"], s["Resource"]) for s in statements] == [
        ("s3:GetObject", {"Fn::Sub": "${ImagesBucket.Arn}/wines/*"})
    ]
    from sommelier.catalog.importer import photo_key

    assert photo_key("a.jpg", b"x").startswith("wines/")  # where imported photos are put
    rules = resources["ImagesBucket"]["Properties"]["LifecycleConfiguration"]["Rules"]
    uploads = next(r for r in rules if r.get("Prefix") == "catalog/incoming/")
    assert uploads["Status"] == "Enabled" and 1 <= uploads["ExpirationInDays"] <= 90
    assert not [r for r in rules if r.get("Prefix", "").startswith("wines")]  # photos are never expired


# ------------------------------------------------------------------------------ the shop --


def test_retention_job_runs_nightly_in_the_tool_function(resources, template):
    event = resources["WineToolsFunction"]["Properties"]["Events"]["MessageRetention"]
    assert event["Type"] == "Schedule" and event["Properties"]["Schedule"].startswith("cron(")
    body = event["Properties"]["Input"]["Fn::Sub"]
    assert json.loads(body.replace("${MessageRetentionDays}", "180")) == {
        "tool": "purge_old_messages",
        "arguments": {"days": 180},
        "scheduled": True,  # a failure raises: Lambda retries, then JobFailureQueue (JobFailuresAlarm)
    }
    on_failure = resources["WineToolsFunction"]["Properties"]["EventInvokeConfig"]["DestinationConfig"]["OnFailure"]
    assert on_failure == {"Type": "SQS", "Destination": {"Fn::GetAtt": ["JobFailureQueue", "Arn"]}}
    assert str(template["Parameters"]["MessageRetentionDays"]["Default"]) == "180"


def test_weekly_report_function_runs_on_mondays_with_its_own_matplotlib(resources):
    function = resources["WeeklyReportFunction"]["Properties"]
    assert function["Events"]["EveryMonday"]["Properties"]["Schedule"] == "cron(0 6 ? * MON *)"
    assert "VpcConfig" not in function  # it reaches Telegram without a NAT
    requirements = (ROOT / function["CodeUri"] / "requirements.txt").read_text()
    assert "matplotlib" in requirements
    assert "matplotlib" not in (ROOT / "layers" / "sommelier" / "requirements.txt").read_text()
    assert function["Environment"]["Variables"]["ADMIN_CHAT_ID"] == {"Ref": "AdminChatId"}
    agent = resources["AgentFunction"]["Properties"]["Environment"]["Variables"]
    assert agent["REPORT_FUNCTION_NAME"] == {"Ref": "WeeklyReportFunction"}


def test_the_shops_file_is_seeded_on_deploy_only_when_named(resources, template):
    seed = resources["CatalogueSeed"]
    assert seed["Type"] == "Custom::CatalogueSeed" and seed["Condition"] == "CatalogueUrlGiven"
    assert template["Conditions"]["CatalogueUrlGiven"] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "CatalogueUrl"}, ""]}]}
    assert seed["DependsOn"] == "DatabaseMigrations"  # the tables exist first
    properties = seed["Properties"]
    assert properties["ServiceToken"] == {"Fn::GetAtt": ["CatalogDropFunction", "Arn"]}
    assert properties["Url"] == {"Ref": "CatalogueUrl"}
    drop_timeout = resources["CatalogDropFunction"]["Properties"]["Timeout"]
    assert drop_timeout <= properties["ServiceTimeout"] <= 3600
    pattern = template["Parameters"]["CatalogueUrl"]["AllowedPattern"]
    assert re.fullmatch(pattern, "") and re.fullmatch(pattern, "https://shop.example/catalog.csv")
    assert not re.fullmatch(pattern, "http://shop.example/catalog.csv")


def test_catalogue_drops_reach_their_function_through_eventbridge(resources):
    bucket = resources["ImagesBucket"]["Properties"]
    assert bucket["NotificationConfiguration"] == {"EventBridgeConfiguration": {"EventBridgeEnabled": True}}
    function = resources["CatalogDropFunction"]["Properties"]
    pattern = function["Events"]["CatalogueUploaded"]["Properties"]["Pattern"]
    assert pattern["detail"]["object"]["key"] == [{"prefix": "catalog/incoming/"}]
    assert pattern["detail"]["bucket"]["name"] == [{"Ref": "ImagesBucket"}]
    reads = [s for s in _statements(resources, "CatalogDropFunction") if s["Action"] == "s3:GetObject"]
    assert reads == [
        {
            "Sid": "ReadDroppedCatalogues",
            "Effect": "Allow",
            "Action": "s3:GetObject",
            "Resource": {"Fn::Sub": "${ImagesBucket.Arn}/catalog/incoming/*"},
        }
    ]

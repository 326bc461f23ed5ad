"""The domain's typed objects, shared by every port: a wine, a search and its result, a turn, a chat, the answer."""

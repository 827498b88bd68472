from django.apps import AppConfig


class McpBridgeConfig(AppConfig):
    name = "mcp_bridge"
    label = "mcp_bridge"

"""The network layer: a defensive HTTP client (caps and deadlines on every read) and an SSE reader."""

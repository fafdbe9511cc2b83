"""Output: the one sink (stdout data, stderr diagnostics, JSON mode) and the renderers of each format."""

"""HTTP routes, one module per FastGPT API area."""

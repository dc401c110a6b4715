"""CLI verbs, one module each. Each module has `register(subparsers)`."""

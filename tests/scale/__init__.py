"""Load-generator scale: the mock server, self-check, multi-process workers, Ray."""

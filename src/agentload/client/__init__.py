"""Streaming OpenAI-compatible client: sends a prompt, stamps the stream, records the result."""

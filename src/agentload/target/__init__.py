"""Where agents' calls go: the narrow interface (`call`), an OpenAI-compatible HTTP endpoint
(`http`), and the system under test as the user names it, checked and opened (`deployment`)."""

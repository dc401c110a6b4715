"""Results schema, terminal summary, HTML report."""

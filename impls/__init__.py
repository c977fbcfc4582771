"""Built-in named implementations of the LLM steps (YAML), installed as roofcalc.impldata."""

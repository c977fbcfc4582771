"""Built-in op definitions (YAML), installed as roofcalc.opdata."""

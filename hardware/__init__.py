"""Built-in hardware specs (YAML), installed as roofcalc.hwdata."""

"""Built-in model presets (YAML), installed as roofcalc.modeldata."""

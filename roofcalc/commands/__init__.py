"""The click commands, one module per family; roofcalc.cli assembles them."""

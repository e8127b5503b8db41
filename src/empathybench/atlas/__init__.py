"""The atlas: the field's published models, recomputed from their released outputs by each instrument's own
scorer, with one model identity table; read to place a run among them and to check a reproduction."""

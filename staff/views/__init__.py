"""The staff views, one module per page family; each is a thin view over a typed module of its domain app."""

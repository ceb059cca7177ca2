// placeholder: the shared store test suite every store passes

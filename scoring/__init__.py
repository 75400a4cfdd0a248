"""Pure rules engines for the dice games of RULES.md: standard library only, no I/O."""

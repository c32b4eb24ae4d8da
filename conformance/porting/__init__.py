"""What a port may declare about itself and how a case is fitted to it: wording, its own ids
and clock (built on the runner); and the Go original's known failures."""

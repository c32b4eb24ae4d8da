module example.com/harness9-adapter

go 1.18

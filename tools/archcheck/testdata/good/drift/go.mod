module example.com/drift

go 1.26.0

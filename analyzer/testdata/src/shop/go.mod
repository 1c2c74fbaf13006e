module shop

go 1.26

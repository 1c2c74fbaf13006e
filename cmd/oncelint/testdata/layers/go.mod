module example.com/layers

go 1.26

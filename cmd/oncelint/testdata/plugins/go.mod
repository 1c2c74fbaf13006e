module example.com/plugins

go 1.26

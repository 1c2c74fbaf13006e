module example.com/logkit

go 1.26

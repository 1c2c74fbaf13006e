module example.com/hooks

go 1.26

require example.com/courier v1.0.0

module example.com/app

go 1.26

require example.com/gateway v0.0.0

replace example.com/gateway => ../gateway

module example.com/app

go 1.26

require example.com/logkit v1.0.0

replace example.com/logkit => ./logkit

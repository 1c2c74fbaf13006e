module example.com/vendored

go 1.26

require example.com/mail v1.0.0

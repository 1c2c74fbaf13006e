module app

go 1.26

module ormshop

go 1.26

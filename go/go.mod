module rookery.test/rookery

go 1.19

module github.com/honestbee/jobq

go 1.17

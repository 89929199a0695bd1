module saturnpeers

go 1.19

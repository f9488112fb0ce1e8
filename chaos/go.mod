module github.com/zklock/zklock/chaos

go 1.26.0

require (
	github.com/jackc/pgx/v5 v5.12.0
	github.com/zklock/zklock v0.0.0-20261126161104-1e504b70e496
	github.com/zklock/zklock/fence v0.0.0-20261126161104-1e504b70e496
	go.uber.org/goleak v1.3.0
	golang.org/x/sys v0.49.0
)

require (
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/text v0.41.0 // indirect
)

// The suite builds against the checkout: the root module and the fence
// beside it, so that the workers run the code zklock's own tests run.
replace (
	github.com/zklock/zklock => ..
	github.com/zklock/zklock/fence => ../fence
)

package pgtest_test

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/zklock/zklock/fence/pgtest"
)

func ExampleLaunch() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := pgtest.Launch(ctx) // in a test: pgtest.Start(t)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	db, _ := sql.Open("pgx", s.DSN())
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT 6 * 7").Scan(&n); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(n)
	// Output: 42
}

// Command alerts sends one alert.
package main

import (
	"context"
	"os"

	_ "example.com/plugins/fake"
	"example.com/plugins/notify"
	_ "example.com/plugins/pager"
)

func main() {
	notify.Dispatch(context.Background(), os.Args[1])
	notify.Test(context.Background(), os.Args[1])
}

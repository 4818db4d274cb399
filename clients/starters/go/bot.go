// A twistarena starter bot in Go, standard library only (Go 1.19+), reading the
// bridge's plain-text form:
//
//	go build -o bot bot.go
//	twistarena bot --exec ./bot --text --server ... --match ... --token ...
//
// Each decision is a block of lines ending with "end"; the bot answers one action id.
// Anything for a person goes to stderr (the bridge logs it).
package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Lower is better: twist or take a bonus first, then plain card plays,
// keep Twhist cards for later, decline and take the Twisted row last.
var rank = map[string]int64{"twist": 0, "bonus": 0, "play": 1, "extend": 1, "start": 1,
	"pick": 1, "reserve": 1, "twhist": 3, "decline": 4, "stop": 4, "take": 5}

// less compares {kind rank, card value, id} in that order.
func less(a, b [3]int64) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<16), 1<<20)
	var best [3]int64
	found := false
	for in.Scan() {
		words := strings.Split(in.Text(), " ")
		switch words[0] {
		case "decision":
			found = false
		case "action":
			id, _ := strconv.ParseInt(words[1], 10, 64)
			mine := [3]int64{2, 0, id}
			for _, word := range words[2:] {
				if word == "|" {
					break
				}
				key, value, _ := strings.Cut(word, "=")
				if key == "kind" {
					if r, ok := rank[value]; ok {
						mine[0] = r
					}
				} else if key == "card" || key == "card.value" {
					mine[1], _ = strconv.ParseInt(value, 10, 64)
				}
			}
			if !found || less(mine, best) {
				best, found = mine, true
			}
		case "end":
			fmt.Println(best[2]) // fmt writes straight to stdout: nothing to flush
		case "over":
			fmt.Fprintln(os.Stderr, "match over:", in.Text())
			return
		}
	}
}

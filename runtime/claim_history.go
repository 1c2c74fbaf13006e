package once

import (
	"sync"
	"sync/atomic"
)

// A claim whose key is new needs one statement, the insert; a claim that meets an existing
// row also needs the read that answers it. A claim that reads the key's row first and
// inserts only where there is none makes a duplicate one statement (a plain read) instead of
// two round trips, and costs every new key a read before its insert (a Forever guard sends
// them as two statements, the read alone being the cheapest answer to a duplicate; an Open
// guard as one, see claimOrReadSQL). Which is cheaper
// depends on the guard: most keys of a guard that charges each order are new, while the keys
// at a front door under a retry storm are mostly duplicates.
//
// So each process keeps, per guard name, a running share of the claims that met an existing
// row, and reads first while that share is above readFirstAbove. The share moves an eighth of
// the way to 1 for each duplicate and to 0 for each new key: two duplicates in a row turn
// reading first on, some sixteen new keys in a row turn it off. The choice decides round
// trips only, never an outcome: a duplicate that inserted first reads the row after its
// insert, as one that read first does.

// claimHistories maps a Forever guard's name to its *claimHistory, openHistories an Open
// guard's: an Open guard meeting open claims sends the claim that also reads the open
// claim's handle (one statement, see claimOrReadSQL), and the claim alone while its keys are
// new. Guard names are few (they are written in code), so the maps stay small.
//
// statementHistories maps a Statement guard's name to its *reserveHistory.
var claimHistories, openHistories, statementHistories sync.Map

// reserveHistory is a Statement guard's two running shares of its reservations' first
// answers. While most of them are refused (a storm past the cap), a reservation first reads
// whether the key is marked full (fullSQL), a plain read that answers a refusal without the
// reservation's statement, and sends the reservation only when it is not. While few of them
// meet a key holding units, a reservation of one unit first sends the plain insert of a new
// key's first slot (firstSQL).
type reserveHistory struct{ refused, busy claimHistory }

func reserveHistoryOf(name string) *reserveHistory {
	if h, ok := statementHistories.Load(name); ok {
		return h.(*reserveHistory)
	}
	h, _ := statementHistories.LoadOrStore(name, &reserveHistory{})
	return h.(*reserveHistory)
}

// record counts one reservation's first answer: refused or not, and whether its key held
// units.
func (h *reserveHistory) record(refused, busy bool) {
	h.refused.record(refused)
	h.busy.record(busy)
}

// claimHistory is one guard's running share of duplicate claims, in units of 1/shareOne.
type claimHistory struct{ share atomic.Int32 }

const (
	shareOne       = 1 << 16
	readFirstAbove = shareOne / 8
)

func historyOf(name string) *claimHistory { return historyIn(&claimHistories, name) }

func historyIn(histories *sync.Map, name string) *claimHistory {
	if h, ok := histories.Load(name); ok {
		return h.(*claimHistory)
	}
	h, _ := histories.LoadOrStore(name, &claimHistory{})
	return h.(*claimHistory)
}

// readFirst reports whether the next claim should read the key's row first.
func (h *claimHistory) readFirst() bool { return h.share.Load() > readFirstAbove }

// record counts one claim's first answer: a new key, or a duplicate.
func (h *claimHistory) record(duplicate bool) {
	target := int32(0)
	if duplicate {
		target = shareOne
	}
	for {
		old := h.share.Load()
		if h.share.CompareAndSwap(old, old+(target-old)/8) {
			return
		}
	}
}

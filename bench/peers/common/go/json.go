package peer

import (
	"math"
	"os"
	"strconv"
	"strings"
)

// Line is one JSON Lines record; keys keep the order they were added in.
type Line struct{ b strings.Builder }

// NewLine starts a record.
func NewLine() *Line {
	l := &Line{}
	l.b.WriteByte('{')
	return l
}

func (l *Line) key(k string) {
	if l.b.Len() > 1 {
		l.b.WriteByte(',')
	}
	l.b.WriteString(strconv.Quote(k))
	l.b.WriteByte(':')
}

// S adds a string field.
func (l *Line) S(k, v string) *Line { l.key(k); l.b.WriteString(strconv.Quote(v)); return l }

// I adds an integer field.
func (l *Line) I(k string, v int64) *Line {
	l.key(k)
	l.b.WriteString(strconv.FormatInt(v, 10))
	return l
}

// F adds a number with the given digits after the point (null if not finite).
func (l *Line) F(k string, v float64, decimals int) *Line {
	l.key(k)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		l.b.WriteString("null")
	} else {
		l.b.WriteString(strconv.FormatFloat(v, 'f', decimals, 64))
	}
	return l
}

// Print writes the record and a newline on stdout.
func (l *Line) Print() {
	l.b.WriteString("}\n")
	os.Stdout.WriteString(l.b.String())
}

package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/rfmkit/rfm/describe"
)

// Progress draws a bar with the elapsed time and an ETA on a terminal, and
// otherwise stays silent until Finish prints one summary line. A quiet
// Progress prints nothing at all. The bar is redrawn by a ticker so the
// Clock moves during a long solve, between the engine's reports.
type Progress struct {
	w     io.Writer
	tty   bool
	quiet bool
	width int // columns of the bar itself

	mu     sync.Mutex
	start  time.Time
	frac   float64
	label  string
	drawn  bool
	stop   chan struct{}
	wg     sync.WaitGroup
	now    func() time.Time // for tests
	closed bool
}

// NewProgress starts a Progress display on w. tty says whether w is a
// terminal (a bar is drawn only then).
func NewProgress(w io.Writer, tty, quiet bool) *Progress {
	p := &Progress{w: w, tty: tty && !quiet, quiet: quiet, width: 28, now: time.Now}
	p.start = p.now()
	if p.tty {
		p.stop = make(chan struct{})
		p.wg.Add(1)
		go p.tick()
	}
	return p
}

func (p *Progress) tick() {
	defer p.wg.Done()
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			p.draw()
			p.mu.Unlock()
		}
	}
}

// Update records how far the work is (fraction in [0, 1], never going
// back) and what it is doing.
func (p *Progress) Update(frac float64, label string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if frac > p.frac {
		p.frac = min(frac, 1)
	}
	p.label = label
	if p.tty {
		p.draw()
	}
}

// line renders the bar: [=======>       ]  42%  round 2/5 agop  0:03 ETA 0:04
func (p *Progress) line() string {
	filled := int(p.frac * float64(p.width))
	bar := strings.Repeat("=", filled)
	if filled < p.width {
		bar += ">" + strings.Repeat(" ", p.width-filled-1)
	}
	elapsed := p.now().Sub(p.start)
	eta := "ETA --:--"
	if p.frac >= 0.02 && p.frac < 1 {
		rest := time.Duration(float64(elapsed) * (1 - p.frac) / p.frac)
		eta = "ETA " + Clock(rest)
	} else if p.frac >= 1 {
		eta = "ETA 0:00"
	}
	return fmt.Sprintf("[%s] %3.0f%%  %s  %s %s", bar, 100*p.frac, p.label, Clock(elapsed), eta)
}

func (p *Progress) draw() {
	if p.closed {
		return
	}
	// \r returns to the line start; \x1b[K clears what a longer label left.
	fmt.Fprintf(p.w, "\r%s\x1b[K", p.line())
	p.drawn = true
}

// Log prints line on a line of its own (above the bar on a terminal,
// which is redrawn below it) unless quiet: a step that ended, for a long
// command whose bar alone would not say what it did.
func (p *Progress) Log(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.quiet || p.closed {
		return
	}
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
	fmt.Fprintln(p.w, line)
	if p.tty {
		p.draw()
	}
}

// Finish removes the bar and prints summary (one line) unless quiet.
func (p *Progress) Finish(summary string) {
	p.close()
	if p.quiet || summary == "" {
		return
	}
	fmt.Fprintf(p.w, "%s\n", summary)
}

// Abort removes the bar without a summary (the caller reports an error).
func (p *Progress) Abort() { p.close() }

// stopTicker ends the periodic redraw.
func (p *Progress) stopTicker() {
	if p.stop != nil {
		close(p.stop)
		p.wg.Wait()
		p.stop = nil
	}
}

func (p *Progress) close() {
	p.stopTicker()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn && !p.closed {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
	p.closed = true
}

// Elapsed is the time since the Progress started.
func (p *Progress) Elapsed() time.Duration { return p.now().Sub(p.start) }

// Clock formats a duration as m:ss or h:mm:ss.
func Clock(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	if s < 0 {
		s = 0
	}
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// Seconds formats a duration for summaries (describe.Seconds).
func Seconds(d time.Duration) string { return describe.Seconds(d) }

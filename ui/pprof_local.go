package ui

import "strings"

// PprofLocalView is the page kbench shows in place of pprof's Source and
// Disassemble views (/profiles/{id}/pprof/source, …/disasm and the same
// under /diff/{base}/{target}/pprof/): those views read the program's
// source files and binary, which are on the machine that ran it, not on
// this server, and a server that opened the paths a profile names would
// let any profile read any of its files. The page says so and gives the
// commands that show them where the files are.
type PprofLocalView struct {
	Page
	// View is "source" or "disassembly".
	View string
	// Commands are shell lines to copy, each with its comment.
	Commands []PprofCommand
	// Back is the pprof UI the request came from.
	Back string
}

// PprofCommand is one line of the page's shell session.
type PprofCommand struct {
	Line, Comment string
}

// PprofProfile is one profile the commands download: its URL (absolute)
// and the file name it downloads as.
type PprofProfile struct {
	URL, File string
}

// NewPprofLocalView builds the page for view ("source" or "disasm") of
// one profile, or of a diff when base is not nil. fn is the function
// regular expression pprof's UI asked for (its f= parameter), "" for
// none.
func NewPprofLocalView(view string, target PprofProfile, base *PprofProfile, fn, back string) PprofLocalView {
	v := PprofLocalView{View: "source", Back: back}
	if view == "disasm" {
		v.View = "disassembly"
	}
	re := fn
	if re == "" {
		re = "FUNCTION_REGEXP"
	}
	// pprof reads flags, then the binary (if any), then the profile.
	opts, prof := "", shellQuote(target.File)
	if base != nil {
		v.Commands = append(v.Commands, PprofCommand{"curl -fo " + shellQuote(base.File) + " " + shellQuote(base.URL), "the base profile"})
		opts = "-diff_base=" + shellQuote(base.File) + " "
	}
	v.Commands = append(v.Commands, PprofCommand{"curl -fo " + prof + " " + shellQuote(target.URL), "the profile"})
	if v.View == "source" {
		v.Commands = append(v.Commands,
			PprofCommand{"go tool pprof -http=: -source_path=\"$PWD\" " + opts + prof, "in the program's source tree: pprof's UI, View → Source"},
			PprofCommand{"go tool pprof -source_path=\"$PWD\" -list=" + shellQuote(re) + " " + opts + prof, "or the annotated source in the terminal"})
	} else {
		v.Commands = append(v.Commands,
			PprofCommand{"go tool pprof -http=: " + opts + "PATH/TO/BINARY " + prof, "with the binary that was profiled: pprof's UI, View → Disassemble"},
			PprofCommand{"go tool pprof -disasm=" + shellQuote(re) + " " + opts + "PATH/TO/BINARY " + prof, "or the annotated assembly in the terminal"})
	}
	v.Page.Title = "pprof's " + v.View + " view runs where the program is"
	return v
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-/:=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Package wasmstack shortens the text of a Wasm trap, as wazero reports it
// ("wasm error: unreachable\nwasm stack trace:\n\t.main.f(i32) i32\n..."),
// to one readable line: the trap, what the guest said before it, and the
// guest's own frames, demangled, with the Go runtime's frames left out.
package wasmstack

import (
	"fmt"
	"regexp"
	"strings"
)

// MaxFrames is the most frames Short keeps.
const MaxFrames = 6

// maxFrameLen caps one frame's text.
const maxFrameLen = 80

// signature is a frame's Wasm signature: "(i32,i32) i64".
var signature = regexp.MustCompile(`\((?:(?:i32|i64|f32|f64|v128|funcref|externref),?)*\)(?: (?:i32|i64|f32|f64|v128|funcref|externref))*$`)

// modulePath is a Go package path as Go's Wasm symbol names spell it, its
// slashes turned to underscores: "github.com_dynafold_dynafold_sdk-guest".
var modulePath = regexp.MustCompile(`^[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+_[A-Za-z0-9_.-]*?([A-Za-z0-9-]+)\.`)

// Short returns the trap's text on one line: its first line (the trap,
// e.g. "unreachable"), reason (what the guest said before trapping, such as
// a Go panic's message) if any, and "wasm stack: f < g < h": at most
// MaxFrames of the guest's frames, innermost first, each demangled (a
// generic shape is "[…]", a package path its last element), repeats
// counted ("×3"), the Go runtime's own frames and the export trampolines
// left out (they say nothing about the guest's code).
func Short(text, reason string) string {
	text = strings.TrimPrefix(text, "wasm error: ")
	lines := strings.Split(text, "\n")
	out := lines[0]
	if reason != "" {
		out += ": " + reason
	}
	var all, mine []string
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "\t\t") || strings.Contains(l, ".go:") {
			continue // "wasm stack trace:", source positions
		}
		f := Frame(strings.TrimSpace(l))
		all = append(all, f)
		if !runtimeFrame(f) {
			mine = append(mine, f)
		}
	}
	if len(mine) == 0 {
		mine = all
	}
	if len(mine) == 0 {
		return out
	}
	return out + "; wasm stack: " + strings.Join(collapse(mine), " < ")
}

// collapse counts repeated frames and keeps at most MaxFrames.
func collapse(frames []string) []string {
	var out []string
	for i := 0; i < len(frames); {
		j := i + 1
		for j < len(frames) && frames[j] == frames[i] {
			j++
		}
		f := frames[i]
		if j-i > 1 {
			f = fmt.Sprintf("%s ×%d", f, j-i)
		}
		out = append(out, f)
		i = j
	}
	if len(out) > MaxFrames {
		out = append(out[:MaxFrames], fmt.Sprintf("… (%d more)", len(out)-MaxFrames))
	}
	return out
}

// runtimeFrame reports a frame of the Go runtime, Rust's standard library
// and panic machinery, or a trampoline.
func runtimeFrame(f string) bool {
	for _, p := range []string{"runtime.", "wasm_pc_f_loop", "_rt0_wasm", "syscall.", "internal/",
		"std::", "core::", "alloc::", "panic_abort::", "__rust_", "rust_panic", "rust_begin_unwind", "<std::", "<core::", "<alloc::"} {
		if strings.HasPrefix(f, p) {
			return true
		}
	}
	return false
}

// Frame demangles one frame of wazero's stack trace: no leading dot or
// Wasm signature, a package path reduced to its last element, a generic
// shape to "[…]", at most 80 characters.
//
//	.main.__folder_go.shape.struct___WarehouseID_string__ddb___w_____.fold(i32) i32 → main.(*folder[…]).fold
//	.github.com_dynafold_dynafold_sdk-guest.Register(i32) i32                        → sdk-guest.Register
//	_ZN14dynafold_guest4fold4call17h949813c3b1f8945aE                                 → dynafold_guest::fold::call
func Frame(f string) string {
	f = strings.TrimPrefix(f, ".")
	f = strings.TrimSpace(signature.ReplaceAllString(f, ""))
	if d, ok := rustSymbol(f); ok {
		f = d
	} else {
		f = shape(f)
	}
	if m := modulePath.FindStringSubmatchIndex(f); m != nil {
		f = f[m[2]:]
	}
	if len(f) > maxFrameLen {
		f = f[:maxFrameLen-1] + "…"
	}
	return f
}

// shape replaces a generic instantiation's shape: "name[go.shape.T]" and
// Go's Wasm spelling of it, "name_go.shape.T_" (brackets, spaces and
// quotes turned to underscores; "(*name" to "__name").
func shape(f string) string {
	i := strings.Index(f, "go.shape.")
	if i < 1 {
		return f
	}
	switch f[i-1] {
	case '[': // readable: match the brackets
		depth := 0
		for j := i - 1; j < len(f); j++ {
			switch f[j] {
			case '[':
				depth++
			case ']':
				depth--
				if depth == 0 {
					return f[:i] + "…" + shape(f[j:])
				}
			}
		}
		return f[:i] + "…]"
	case '_':
	default:
		return f
	}
	head, rest := f[:i-1], f[i:]
	// The method after the shape, if any: ".name" at the end, a name that
	// does not end in an underscore (a mangled bracket).
	method := ""
	if j := strings.LastIndex(rest, "."); j > len("go.shape") {
		if tail := rest[j+1:]; tail != "" && !strings.HasSuffix(tail, "_") && !strings.ContainsAny(tail, " ") {
			method = rest[j:]
		}
	}
	dot := strings.LastIndex(head, ".")
	pkg, name := head[:dot+1], head[dot+1:]
	if strings.HasPrefix(name, "__") && method != "" { // (*name[…]).method
		return pkg + "(*" + name[2:] + "[…])" + method
	}
	if method != "" {
		return pkg + name + "[…]" + method
	}
	return pkg + name + "[…]"
}

// rustEscapes are the escapes of Rust's legacy symbol mangling.
var rustEscapes = strings.NewReplacer(
	"$LT$", "<", "$GT$", ">", "$RF$", "&", "$BP$", "*", "$C$", ",", "$SP$", "@",
	"$u20$", " ", "$u22$", "\"", "$u27$", "'", "$u2b$", "+", "$u3b$", ";",
	"$u5b$", "[", "$u5d$", "]", "$u7b$", "{", "$u7d$", "}", "$u7e$", "~", "..", "::",
)

// rustSymbol demangles a symbol of Rust's legacy mangling,
// "_ZN" (length, segment)… "E", into a path without its hash segment:
// _ZN14dynafold_guest4fold4call17h949813c3b1f8945aE is
// dynafold_guest::fold::call. ok is false for any other symbol.
func rustSymbol(sym string) (string, bool) {
	rest, ok := strings.CutPrefix(sym, "_ZN")
	if !ok {
		return "", false
	}
	var segs []string
	for !strings.HasPrefix(rest, "E") {
		n := 0
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			n = n*10 + int(rest[i]-'0')
			i++
		}
		if i == 0 || n == 0 || i+n > len(rest) {
			return "", false
		}
		segs = append(segs, rest[i:i+n])
		rest = rest[i+n:]
	}
	if len(segs) > 1 && isRustHash(segs[len(segs)-1]) {
		segs = segs[:len(segs)-1]
	}
	for i, s := range segs {
		if strings.HasPrefix(s, "_$") {
			s = s[1:]
		}
		segs[i] = rustEscapes.Replace(s)
	}
	return strings.Join(segs, "::"), true
}

// isRustHash reports the hash segment of a legacy Rust symbol: "h" and 16
// hexadecimal digits.
func isRustHash(s string) bool {
	if len(s) != 17 || s[0] != 'h' {
		return false
	}
	for _, c := range s[1:] {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

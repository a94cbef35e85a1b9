package kafkasec

import "strings"

// moduleKind classifies a login module class by its simple name, so shaded
// copies (e.g. "kafkashaded.org.apache...PlainLoginModule") work too.
func moduleKind(class string) string {
	simple := class
	if i := strings.LastIndexByte(class, '.'); i >= 0 {
		simple = class[i+1:]
	}
	return simple
}

// safeModuleName returns the class name if it is harmless to print (it
// looks like a Java class name ending in LoginModule), else "".
func safeModuleName(class string) string {
	if !strings.HasSuffix(class, "LoginModule") {
		return ""
	}
	for i, r := range class {
		ok := r == '.' || r == '_' || r == '$' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9')
		if !ok {
			return ""
		}
	}
	return class
}

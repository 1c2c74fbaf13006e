// want package:`impls=0 roots=\[\]`

// Package fanout reaches one e-mail through calls made twice at each level: it is one
// effect to each caller, however many paths lead to it.
package fanout

import "net/smtp"

func send(to string) error { // want send:`^effect\(smtp.SendMail\)$`
	return smtp.SendMail("mail:25", nil, "a@b", []string{to}, nil)
}

func twice(to string) error { // want twice:`^effect\(smtp.SendMail\)$`
	if err := send(to); err != nil {
		return err
	}
	return send(to)
}

func four(to string) error { // want four:`^effect\(smtp.SendMail\)$`
	_ = twice(to)
	return twice(to)
}

// Eight reaches the e-mail by eight paths.
func Eight(to string) error { // want Eight:`^effect\(smtp.SendMail\)$`
	_ = four(to)
	return four(to)
}

package regressions

// NotificationText is notificationText, for the tests of package
// regressions_test (which import ui, as this package cannot).
var NotificationText = notificationText

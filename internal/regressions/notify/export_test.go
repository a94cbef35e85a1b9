package notify

// NotificationText is notificationText, for the tests of package
// notify_test (which import ui, as this package cannot).
var NotificationText = notificationText

// FunctionsText is functionsText, for the same tests.
var FunctionsText = functionsText

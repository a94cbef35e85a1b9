package notify

// NotificationText is notificationText, for the tests of package
// notify_test (which import ui, as this package cannot).
var NotificationText = notificationText

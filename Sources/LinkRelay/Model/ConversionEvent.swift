import Foundation

/// An event the app tracks (a sign-up, a purchase) and a backend reports to its provider.
///
/// Each event carries a UUID, so that it is sent at most once even when a flush is retried or
/// the app is killed mid-send.
public struct ConversionEvent: Sendable, Hashable, Codable, Identifiable {
    /// A purchase amount, for revenue events.
    public struct Revenue: Sendable, Hashable, Codable {
        /// The amount, zero or more.
        public var amount: Decimal
        /// The ISO 4217 currency code, three upper-case letters (`EUR`, `USD`).
        public var currency: String

        /// An amount in a currency (the client validates both).
        public init(amount: Decimal, currency: String) {
            self.amount = amount
            self.currency = currency
        }
    }

    /// Identifies the event for exactly-once delivery.
    public var id: UUID
    /// The event's name, as the app chose it.
    public var name: String
    /// The event's properties.
    public var properties: [String: JSONValue]
    /// When the app tracked the event.
    public var timestamp: Date
    /// Present for revenue events.
    public var revenue: Revenue?

    /// An event; the client stamps `id` and `timestamp` when you call `track`.
    public init(
        id: UUID = UUID(),
        name: String,
        properties: [String: JSONValue] = [:],
        timestamp: Date,
        revenue: Revenue? = nil
    ) {
        self.id = id
        self.name = name
        self.properties = properties
        self.timestamp = timestamp
        self.revenue = revenue
    }
}

import Foundation

/// Where the server keeps the events an app reports after its install, each stored once. One of the
/// stores ``ServerStore`` is made of (the SQL engines implement every one); a part of the server
/// that needs only this takes only this.
package protocol EventStore: Sendable {
    /// Stores an event once: an event with the same ``EventRecord/dedupeKey`` in the project is
    /// the one stored before, returned as it was. On disk when this returns.
    func recordEvent(_ event: EventRecord) async throws -> EventOutcome

    /// The events of `install`, in the order they were received.
    func events(install: String) async throws -> [EventRecord]
}

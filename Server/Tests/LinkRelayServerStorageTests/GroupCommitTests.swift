import Foundation
import Synchronization
import Testing

@testable import LinkRelayServerCore
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

/// The group commit, on its own: every write committed once and answered its own result, a
/// failed commit's writes failed, and the next write committed after it.
@Suite("Group commit")
struct GroupCommitTests {
    /// What the commits saw.
    final class Ledger: Sendable {
        let batches = Mutex<[[Int]]>([])
    }

    @Test("2,000 writes from 200 tasks: each committed exactly once, in batches, each writer answered its own write's result")
    func everyWriteOnce() async throws {
        let ledger = Ledger()
        let commits = GroupCommit<Int, Int>(limit: 64) { writes in
            ledger.batches.withLock { $0.append(writes) }
            // A commit takes a while: the writes arriving meanwhile form the next batch.
            for _ in 0..<3 { await Task.yield() }
            return writes.map { $0 % 7 == 0 ? .failure(StoreError(.failed, "refused \($0)")) : .success($0 * 2) }
        }
        let answers = try await withThrowingTaskGroup(of: [(Int, Result<Int, StoreError>)].self) { group in
            for task in 0..<200 {
                group.addTask {
                    var answers: [(Int, Result<Int, StoreError>)] = []
                    for index in 0..<10 {
                        let write = task * 10 + index
                        do {
                            answers.append((write, .success(try await commits.submit(write))))
                        } catch let error as StoreError {
                            answers.append((write, .failure(error)))
                        }
                    }
                    return answers
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(answers.count == 2_000)
        for (write, answer) in answers {
            switch answer {
            case .success(let doubled): #expect(write % 7 != 0 && doubled == write * 2)
            case .failure(let error): #expect(write % 7 == 0 && error.description.contains("refused \(write)"))
            }
        }
        let batches = ledger.batches.withLock { $0 }
        #expect(batches.flatMap { $0 }.sorted() == Array(0..<2_000), "each write committed exactly once")
        #expect(batches.allSatisfy { $0.count <= 64 })
        #expect(batches.count < 2_000, "writes were committed together")
    }

    @Test("a write after a quiet moment is committed alone, at once")
    func quietWrite() async throws {
        let ledger = Ledger()
        let commits = GroupCommit<Int, Int> { writes in
            ledger.batches.withLock { $0.append(writes) }
            return writes.map { .success($0) }
        }
        #expect(try await commits.submit(1) == 1)
        #expect(try await commits.submit(2) == 2)
        #expect(ledger.batches.withLock { $0 } == [[1], [2]])
    }

    @Test("a commit that answers fewer results than writes fails the writes left without one; the next write is committed")
    func missingResults() async throws {
        let calls = Mutex(0)
        let commits = GroupCommit<Int, Int> { writes in
            calls.withLock { count in
                count += 1
                return count
            } == 1 ? [] : writes.map { .success($0) }
        }
        await #expect(throws: StoreError.self) { try await commits.submit(1) }
        #expect(try await commits.submit(3) == 3)
    }
}

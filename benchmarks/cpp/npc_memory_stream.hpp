// A faithful C++ port of the design source's NPCMemoryStream (000_48f2346f12a1962c.txt), with the
// operators its formulas lost restored as issue 2 specifies. It is the benchmark's yardstick: one
// std::vector of 32-byte-aligned items per NPC, linear scans, swap-with-back eviction, float time.
// (Kept as in the source: no refractory period, no exponent clamp, no consolidation.)
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

enum class MemoryType : uint8_t { Trivia = 0, Observation = 1, Interaction = 2, Hostile = 3, Trauma = 4 };

struct alignas(16) MemoryItem {
    uint32_t targetEntityId;
    float lastAccessTime;
    float stability;
    float salience;
    uint16_t recallCount;
    MemoryType type;
    uint8_t flags;

    inline float EvaluateRetrievability(float currentTime) const {
        float elapsed = std::max(0.0f, currentTime - lastAccessTime);
        if (stability < 0.0001f) return 0.0f;
        return std::exp(-elapsed / stability);
    }
};

class NPCMemoryStream {
public:
    static constexpr size_t MAX_CAPACITY = 64;
    static constexpr float FORGET_THRESHOLD = 0.05f;

    NPCMemoryStream() { m_items.reserve(MAX_CAPACITY); }

    void RecordEvent(uint32_t entityId, MemoryType type, float salience, float currentTime) {
        for (auto& item : m_items) {
            if (item.targetEntityId == entityId && item.type == type) {
                RehearseItem(item, salience, currentTime);
                return;
            }
        }
        if (m_items.size() >= MAX_CAPACITY) {
            EvictLowestValueItem(currentTime);
        }
        MemoryItem newItem;
        newItem.targetEntityId = entityId;
        newItem.lastAccessTime = currentTime;
        newItem.salience = std::clamp(salience, 0.0f, 1.0f);
        newItem.recallCount = 1;
        newItem.type = type;
        newItem.flags = 0;
        float baseStability = 10.0f;
        switch (type) {
            case MemoryType::Trivia: baseStability = 5.0f; break;
            case MemoryType::Observation: baseStability = 30.0f; break;
            case MemoryType::Interaction: baseStability = 120.0f; break;
            case MemoryType::Hostile: baseStability = 600.0f; break;
            case MemoryType::Trauma: baseStability = 3600.0f; break;
        }
        newItem.stability = baseStability * (0.5f + newItem.salience);
        m_items.push_back(newItem);
    }

    const MemoryItem* QueryStrongestMemory(uint32_t entityId, float currentTime) {
        const MemoryItem* bestItem = nullptr;
        float maxRetrievability = 0.0f;
        for (auto& item : m_items) {
            if (item.targetEntityId == entityId) {
                float r = item.EvaluateRetrievability(currentTime);
                if (r > maxRetrievability) {
                    maxRetrievability = r;
                    bestItem = &item;
                }
            }
        }
        if (bestItem && maxRetrievability > FORGET_THRESHOLD) {
            const_cast<MemoryItem*>(bestItem)->lastAccessTime = currentTime;
            const_cast<MemoryItem*>(bestItem)->recallCount++;
            return bestItem;
        }
        return nullptr;
    }

    // (c) of the benchmark: R of every memory, written out (the source evaluates lazily per item).
    size_t SweepRetrievability(float currentTime, float* out) const {
        size_t i = 0;
        for (const auto& item : m_items) out[i++] = item.EvaluateRetrievability(currentTime);
        return i;
    }

    size_t size() const { return m_items.size(); }

private:
    std::vector<MemoryItem> m_items;

    void RehearseItem(MemoryItem& item, float newSalience, float currentTime) {
        item.lastAccessTime = currentTime;
        item.recallCount++;
        item.salience = std::max(item.salience, newSalience);
        float alpha = 1.35f;
        item.stability *= (1.0f + alpha * std::log(1.0f + static_cast<float>(item.recallCount)) * item.salience);
    }

    void EvictLowestValueItem(float currentTime) {
        size_t evictIndex = 0;
        float lowestScore = 1e9f;
        for (size_t i = 0; i < m_items.size(); ++i) {
            float r = m_items[i].EvaluateRetrievability(currentTime);
            if (r < FORGET_THRESHOLD) {
                evictIndex = i;
                break;
            }
            float score = r * 0.6f + m_items[i].salience * 0.4f;
            if (score < lowestScore) {
                lowestScore = score;
                evictIndex = i;
            }
        }
        m_items[evictIndex] = m_items.back();
        m_items.pop_back();
    }
};
